#include "gan/eval/score_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/parse_number.h"
#include "core/word_list.h"
#include "io/atomic_file.h"
#include "io/table_line.h"
#include "metrics/feature_net.h"
#include "metrics/metric.h"

namespace hamgan::eval {

namespace fs = std::filesystem;

double ScoreRow::value(const std::string& metric) const {
  const auto it = values.find(metric);
  return it == values.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

std::string score_table_header() { return "iteration,n,seconds,features," + join_words(metrics::table_metric_names(), ","); }

std::string scores_csv(const std::string& run_dir) { return (fs::path(run_dir) / "scores.csv").string(); }
std::string scores_png(const std::string& run_dir) { return (fs::path(run_dir) / "scores.png").string(); }
std::string real_scores_csv(const std::string& run_dir) { return (fs::path(run_dir) / "real_scores.csv").string(); }

std::string run_score_table(const std::string& run_dir) {
  // Pre-release builds wrote DIR/fid.csv: its rows are not read as this build's.
  const std::string old = (fs::path(run_dir) / "fid.csv").string();
  std::error_code ec;
  if (!fs::exists(scores_csv(run_dir), ec) && fs::exists(old, ec))
    fail(old, ": the score table of a pre-release hamgan; move it aside and score the run again with `hamgan fid --run ",
         run_dir, "`");
  return scores_csv(run_dir);
}

namespace {

// A CSV cell: "" (where allowed) and "nan" are "not computed".
double real_cell(const std::string& s, bool empty_ok, const std::string& where, const std::string& col) {
  if (s == "nan" || (s.empty() && empty_ok)) return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  if (!parse_real(s, v)) fail(where, ": column '", col, "' is '", s, "'; expected a number");
  return v;
}

int64_t count_cell(const std::string& s, const std::string& where, const std::string& col) {
  int64_t v = 0;
  if (!parse_int(s, v) || v < 0) fail(where, ": column '", col, "' is '", s, "'; expected a non-negative integer");
  return v;
}

std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream ss(line);
  for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
  if (!line.empty() && line.back() == ',') f.push_back("");
  return f;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  io::table_line(in, line, 1);
  return line;
}

}  // namespace

std::vector<ScoreRow> read_score_table(const std::string& path) {
  std::vector<ScoreRow> rows;
  std::ifstream in(path);
  if (!in) return rows;
  std::string line;
  int64_t no = 0;
  std::vector<std::string> header;
  while (io::table_line(in, line, ++no)) {
    const std::string where = path + ":" + std::to_string(no);
    if (no == 1) {
      header = cells(line);
      std::vector<std::string> known = {"iteration", "n", "seconds", "features"};
      for (const auto& m : metrics::table_metric_names()) known.push_back(m);
      for (const auto& h : header)
        if (std::count(header.begin(), header.end(), h) > 1 || std::find(known.begin(), known.end(), h) == known.end())
          fail(where, ": header is '", line, "'; column '", h, "' is ",
               std::count(header.begin(), header.end(), h) > 1 ? "repeated" : "unknown", "; expected '",
               score_table_header(), "' or a subset of its columns");
      for (const char* need : {"iteration", "n", "seconds", "fid"})
        if (std::find(header.begin(), header.end(), need) == header.end())
          fail(where, ": header is '", line, "'; it has no column '", need, "'; expected '", score_table_header(), "'");
      continue;
    }
    if (line.empty()) continue;
    const std::vector<std::string> f = cells(line);
    if (f.size() != header.size())
      fail(where, ": ", f.size(), " columns in '", line, "'; expected ", header.size(), " (", join_words(header, ","), ")");
    ScoreRow r;
    for (size_t i = 0; i < header.size(); ++i) {
      const std::string& h = header[i];
      if (h == "iteration") r.iteration = count_cell(f[i], where, h);
      else if (h == "n") r.n = count_cell(f[i], where, h);
      else if (h == "seconds") r.seconds = real_cell(f[i], false, where, h);
      else if (h == "features") {
        if (f[i].empty()) fail(where, ": column 'features' is empty; expected inception or a classifier identity");
        r.net = f[i] == "inception" ? "" : f[i];
      } else {
        const double v = real_cell(f[i], h != "fid", where, h);
        const metrics::ValueRange& range = metrics::metric_entry(h).range;
        // A value no score gives (a negative FID, a precision of 1.3) would rank as the best.
        if (!std::isnan(v) && !range.holds(v))
          fail(where, ": column '", h, "' is '", f[i], "'; expected a value in ", range.text(), ", the only values ", h,
               " takes (a damaged or hand-edited row: correct or remove it)");
        if (!std::isnan(v) || h == "fid") r.values[h] = v;
      }
    }
    rows.push_back(r);
  }
  return rows;
}

std::vector<ScoreRow> read_run_scores(const std::string& run_dir) { return read_score_table(run_score_table(run_dir)); }

std::set<int64_t> scored_iterations(const std::vector<ScoreRow>& rows) {
  std::set<int64_t> s;
  for (const auto& r : rows) s.insert(r.iteration);
  return s;
}

void sort_one_row_per_iteration(std::vector<ScoreRow>& rows, const std::string& path) {
  std::stable_sort(rows.begin(), rows.end(), [](const ScoreRow& a, const ScoreRow& b) { return a.iteration < b.iteration; });
  const auto fid = [](const ScoreRow& r) {
    char b[48] = "";
    if (std::isfinite(r.value("fid"))) std::snprintf(b, sizeof b, "%.4f", r.value("fid"));
    return std::string(b);
  };
  for (size_t i = 1; i < rows.size(); ++i)
    if (rows[i].iteration == rows[i - 1].iteration) {
      size_t k = i + 1;
      while (k < rows.size() && rows[k].iteration == rows[i].iteration) ++k;
      fail(path, ": iteration ", rows[i].iteration, " has ", k - i + 1, " rows (FID ", fid(rows[i - 1]), " and ",
           fid(rows[i]), "); expected one row per scored checkpoint (remove the stale row)");
    }
}

namespace {

std::string num(double v) {
  if (std::isnan(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

// Every row written is one read_score_table accepts: a value its metric can never take (an FID
// that overflowed to inf) is refused here, naming it, and the table stays readable.
std::string row_text(const ScoreRow& r) {
  if (r.net.find_first_of(",\n\r") != std::string::npos)
    fail("scores.csv: feature network name '", r.net, "' has a comma or newline");
  for (const auto& [m, v] : r.values) {
    const metrics::ValueRange& range = metrics::metric_entry(m).range;
    if (!std::isnan(v) && (!std::isfinite(v) || !range.holds(v)))
      fail("iteration ", r.iteration, ": ", m, " is ", num(v), ", not a finite value in ", range.text(),
           ": not written (is the reference's statistics' scale far from the samples'?)");
  }
  std::string s = std::to_string(r.iteration) + "," + std::to_string(r.n) + "," + num(r.seconds) + "," +
                  (r.net.empty() ? "inception" : r.net);
  for (const auto& m : metrics::table_metric_names()) s += "," + num(r.value(m));
  return s + "\n";
}

std::string table_text(const std::vector<ScoreRow>& rows) {
  std::string text = score_table_header() + "\n";
  for (const ScoreRow& r : rows) text += row_text(r);
  return text;
}

// DIR/scores.csv in the current header (a table of a subset of its columns is rewritten).
void ready_table(const std::string& run_dir) {
  const std::string csv = run_score_table(run_dir);
  std::error_code ec;
  const bool exists = fs::exists(csv, ec) && fs::file_size(csv, ec) > 0;
  if (exists && first_line(csv) != score_table_header())
    io::write_file_atomically(csv, table_text(read_score_table(csv)));
}

}  // namespace

void check_comparable(const std::string& who, const std::string& ta, const ScoreRow& a, const std::string& tb,
                      const ScoreRow& b) {
  if (a.net != b.net)
    fail(who, ": ", tb, " was scored in the features of ", metrics::describe_feature_net(b.net), ", ", ta,
         " in those of ", metrics::describe_feature_net(a.net),
         "; FIDs of different feature networks do not compare (score both with the same network)");
  if (a.n != b.n)
    fail(who, ": ", tb, " was scored with ", b.n, " samples, ", ta, " with ", a.n,
         "; FIDs of different sample counts differ by their bias alone and do not compare (score both with one -n: "
         "move one table aside and run `hamgan fid --run DIR -n ", a.n, "`)");
}

void write_score_table(const std::string& path, const std::vector<ScoreRow>& rows) {
  io::write_file_atomically(path, table_text(rows));
}

void append_run_score(const std::string& run_dir, const ScoreRow& r) {
  ready_table(run_dir);
  const std::string csv = scores_csv(run_dir);
  std::error_code ec;
  std::string text;
  if (!fs::exists(csv, ec) || fs::file_size(csv, ec) == 0) text = score_table_header() + "\n";
  text += row_text(r);
  // One write of the whole line (O_APPEND: it lands at the end in one piece), checked.
  io::append_to_file(csv, text);
}

int64_t remove_run_scores(const std::string& run_dir, int64_t iteration) {
  std::vector<ScoreRow> kept;
  int64_t removed = 0;
  for (const ScoreRow& r : read_run_scores(run_dir)) {
    if (r.iteration == iteration) ++removed;
    else kept.push_back(r);
  }
  if (removed > 0) io::write_file_atomically(scores_csv(run_dir), table_text(kept));
  return removed;
}

}  // namespace hamgan::eval
