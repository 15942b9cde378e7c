#include "gan/eval/seed_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ostream>
#include <regex>
#include <set>

#include "core/error.h"
#include "core/parse_number.h"
#include "gan/eval/seed_bands.h"
#include "gan/eval/seed_stats.h"
#include "io/atomic_file.h"
#include "io/output_path.h"

namespace hamgan::eval {

namespace fs = std::filesystem;

namespace {

const char* const kHeader =
    "| module | seeds | iteration | class acc | domain FID | precision | recall | last 4: class acc | "
    "last 4: FID | t (p) vs first: FID, acc |";
// The same table without the p column: an earlier output of this kind, which --out may replace.
const char* const kHeaderWithoutP =
    "| module | seeds | iteration | class acc | domain FID | precision | recall | last 4: class acc | "
    "last 4: FID | t vs first: FID, acc |";

std::string format(const char* spec, double x) {
  char b[64];
  std::snprintf(b, sizeof b, spec, x);
  return b;
}

// "0.850 ± 0.071", "0.950" (one seed), "-" (not scored).
std::string cell(const MeanSd& m, int digits) {
  if (std::isnan(m.mean)) return "-";
  const std::string spec = "%." + std::to_string(digits) + "f";
  return format(spec.c_str(), m.mean) + (std::isnan(m.sd) ? "" : " ± " + format(spec.c_str(), m.sd));
}

std::string t_cell(const WelchT& w) {
  if (std::isnan(w.t)) return "-";
  return format("%.1f", w.t) + " (" + format("%.2f", w.p) + ")";
}

// Per seed: the metric at the last checkpoint, or the mean over the last four (NaN if any is).
std::vector<double> per_seed(const SeedGroup& g, const std::string& metric, size_t last) {
  std::vector<double> out;
  for (const auto& [seed, rows] : g.seeds) {
    const size_t k = std::min(last, rows.size());
    double sum = 0;
    for (size_t i = rows.size() - k; i < rows.size(); ++i) sum += rows[i].value(metric);
    out.push_back(sum / static_cast<double>(k));
  }
  return out;
}

}  // namespace

std::vector<SeedGroup> load_seed_groups(const std::string& dir) {
  if (!fs::is_directory(dir)) fail("compare --seeds '", dir, "': not a directory");
  static const std::regex seeded(R"((.+)_s(\d+))");
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  std::map<std::string, SeedGroup> by_name;
  std::map<std::pair<std::string, int64_t>, fs::path> folder_of;  // (name, seed) -> its folder
  std::optional<std::pair<std::string, ScoreRow>> first;          // every table on the first's scale
  for (const auto& e : entries) {
    std::smatch m;
    const std::string name = e.filename().string();
    if (!std::regex_match(name, m, seeded) || !fs::is_directory(e)) continue;
    const std::string table = run_score_table(e.string());
    std::vector<ScoreRow> rows = read_score_table(table);
    if (rows.empty()) continue;
    sort_one_row_per_iteration(rows, table);  // as `compare --run` reads a run
    for (const ScoreRow& r : rows) {
      if (!first) first.emplace(table, r);
      check_comparable("compare --seeds", first->first, first->second, table, r);
    }
    int64_t seed = 0;
    if (!parse_int(m[2].str(), seed))
      fail("compare --seeds: ", e.string(), ": seed ", m[2].str(), " is too large; expected <name>_s<seed> with a seed below 2^63");
    // a_s0 and a_s00 are one seed number: merged, one run would replace the other unseen.
    const auto [at, fresh] = folder_of.emplace(std::make_pair(m[1].str(), seed), e);
    if (!fresh)
      fail("compare --seeds: ", at->second.string(), " and ", e.string(), " are both seed ", seed, " of '", m[1].str(),
           "'; expected one folder per seed (rename or move one of them)");
    SeedGroup& g = by_name[m[1].str()];
    g.name = m[1].str();
    g.seeds[seed] = std::move(rows);
  }
  if (by_name.empty()) fail("compare --seeds '", dir, "': no ", dir, "/<name>_s<seed>/scores.csv with rows found");
  std::vector<SeedGroup> groups;
  for (auto& [name, g] : by_name) groups.push_back(std::move(g));
  return groups;
}

std::string seed_table(const std::vector<SeedGroup>& groups) {
  struct Line {
    const SeedGroup* g;
    std::vector<double> acc4, fid4;
    std::string text;  // the cells after the name, before the t column
  };
  std::vector<Line> lines;
  for (const SeedGroup& g : groups) {
    Line l{&g, per_seed(g, "class_acc", 4), per_seed(g, "fid", 4), ""};
    std::set<int64_t> its;
    for (const auto& [seed, rows] : g.seeds) its.insert(rows.back().iteration);
    std::string it_text;
    for (int64_t it : its) it_text += (it_text.empty() ? "" : "/") + std::to_string(it);
    l.text = std::to_string(g.seeds.size()) + " | " + it_text + " | " +
             cell(mean_sd(per_seed(g, "class_acc", 1)), 3) + " | " + cell(mean_sd(per_seed(g, "fid", 1)), 1) +
             " | " + cell(mean_sd(per_seed(g, "precision", 1)), 3) + " | " +
             cell(mean_sd(per_seed(g, "recall", 1)), 3) + " | " + cell(mean_sd(l.acc4), 3) + " | " +
             cell(mean_sd(l.fid4), 1);
    lines.push_back(std::move(l));
  }
  // Lowest last-four FID first; a group without one last.
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    const double x = mean_sd(a.fid4).mean, y = mean_sd(b.fid4).mean;
    if (std::isnan(x) || std::isnan(y)) return !std::isnan(x) && std::isnan(y);
    return x < y;
  });
  std::string out = std::string(kHeader) + "\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Line& l : lines) {
    const Line& first = lines.front();
    const std::string t = &l == &first ? "-"
                                       : t_cell(welch_t(l.fid4, first.fid4)) + ", " + t_cell(welch_t(l.acc4, first.acc4));
    out += "| " + l.g->name + " | " + l.text + " | " + t + " |\n";
  }
  return out;
}

void compare_seeds(const std::string& dir, const std::string& prefix, int64_t from, std::ostream& out) {
  static const io::OutputKind table_kind = io::text_output("the table of an earlier `hamgan compare --seeds`", {kHeader, kHeaderWithoutP});
  if (!prefix.empty()) {
    io::check_output_path(prefix + ".md", table_kind, "--out");
    io::check_output_path(prefix + ".svg", seed_bands_output(), "--out");
  }
  const std::vector<SeedGroup> groups = load_seed_groups(dir);
  const std::string table = seed_table(groups);
  out << table;
  if (prefix.empty()) return;
  io::write_file_atomically(prefix + ".md", table);
  write_seed_bands(groups, prefix + ".svg", from);
  out << "wrote " << prefix << ".md and " << prefix << ".svg\n";
}

}  // namespace hamgan::eval
