#include "gan/eval/compare_runs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/error.h"
#include "gan/eval/real_scores.h"
#include "gan/eval/score_table.h"
#include "io/atomic_file.h"
#include "io/metrics_log.h"
#include "io/output_path.h"
#include "io/png.h"
#include "metrics/feature_net.h"
#include "plot/line_plot.h"
#include "metrics/metric.h"

namespace hamgan::eval {

namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string run_name(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "runs/a/"
  return p.filename().string();
}

std::string fmt(double v, const char* f) {
  if (!std::isfinite(v)) return "";
  char b[48];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// Orders FIDs lowest first, a non-finite one (a failed score) after every finite one.
bool better_fid(double a, double b) {
  if (!std::isfinite(b)) return std::isfinite(a);
  return std::isfinite(a) && a < b;
}

std::vector<ScoreRow> scored_rows(const std::string& dir) {
  const std::string csv = run_score_table(dir);
  if (!fs::is_regular_file(csv)) fail("--run ", dir, ": no scores.csv (score the run first: hamgan fid --run ", dir, ")");
  auto rows = read_score_table(csv);
  if (rows.empty()) fail(csv, ": no scored checkpoints");
  sort_one_row_per_iteration(rows, csv);
  return rows;
}

double median_img_s(const std::string& dir) {
  const std::string log = (fs::path(dir) / "metrics.jsonl").string();
  if (!fs::is_regular_file(log)) return kNaN;
  std::vector<double> v;
  for (const auto& rec : read_train_stats_log(log)) {
    const auto it = rec.find("img_s");
    if (it != rec.end() && std::isfinite(it->second)) v.push_back(it->second);
  }
  if (v.empty()) return kNaN;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<RunSummary> summarize_runs(const std::vector<std::string>& run_dirs) {
  if (run_dirs.empty()) fail("compare: no --run given");
  if (run_dirs.size() > plot::plot_palette().size())
    fail("compare: ", run_dirs.size(), " runs; at most ", plot::plot_palette().size(), " fit one figure");
  std::vector<RunSummary> out;
  std::map<std::string, std::string> seen;  // name -> directory
  ScoreRow first;                            // the first run's last row: every run is on its scale
  for (const std::string& dir : run_dirs) {
    RunSummary s;
    s.name = run_name(dir);
    if (seen.count(s.name)) fail("compare: --run ", seen[s.name], " and ", dir, " share the name '", s.name, "'");
    seen[s.name] = dir;
    const auto rows = scored_rows(dir);
    std::set<std::string> nets;
    for (const auto& r : rows) nets.insert(r.net);
    if (nets.size() > 1) fail(run_score_table(dir), ": rows scored in more than one feature network");
    s.features = rows[0].net;
    const ScoreRow& last = rows.back();
    if (out.empty()) first = last;
    else check_comparable("compare", run_dirs[0], first, dir, last);
    s.last = last.values;
    s.iteration = last.iteration, s.fid = last.value("fid");
    for (const auto& r : rows)
      if (!std::isfinite(r.value("fid"))) s.nan_iterations.push_back(r.iteration);
    const auto best = std::min_element(rows.begin(), rows.end(), [](const ScoreRow& a, const ScoreRow& b) {
      return better_fid(a.value("fid"), b.value("fid"));
    });
    if (std::isfinite(best->value("fid")))
      s.best_iteration = best->iteration, s.best_fid = best->value("fid"), s.at_best = best->values;
    else
      s.best_iteration = -1, s.best_fid = kNaN;
    s.img_s = median_img_s(dir);
    out.push_back(s);
  }
  return out;
}

void plot_runs(const std::vector<std::string>& run_dirs, const std::string& png_path) {
  const auto runs = summarize_runs(run_dirs);  // validates
  std::set<int64_t> its;
  std::vector<std::map<int64_t, ScoreRow>> by_run;
  for (const auto& dir : run_dirs) {
    std::map<int64_t, ScoreRow> m;
    for (const auto& r : scored_rows(dir)) m[r.iteration] = r, its.insert(r.iteration);
    by_run.push_back(m);
  }
  // One x axis for all runs; a run without a score at some iteration has NaN there (skipped).
  const std::vector<double> xs(its.begin(), its.end());
  // One panel per metric that every drawn run has at its last checkpoint; fid always.
  std::vector<size_t> drawn;
  for (size_t k = 0; k < runs.size(); ++k) {
    // A run without one finite FID has no line to draw (ranking_table names it); left out of
    // every panel, so each run keeps one colour.
    bool any = false;
    for (const auto& [it, r] : by_run[k]) any = any || std::isfinite(r.value("fid"));
    if (any) drawn.push_back(k);
  }
  if (drawn.empty()) fail("compare: no run has a finite FID; nothing to draw or rank");
  // The real test images' figures where every drawn run has the same ones (one data source,
  // feature network and count: gan/eval/real_scores.h), a flat line beside the runs'; with ten
  // runs the palette has no colour left for it.
  std::optional<ScoreRow> real;
  for (size_t k : drawn) {
    const ScoreRow& last = by_run[k].rbegin()->second;
    const std::optional<ScoreRow> r = real_scores_of(run_dirs[k], last.net, last.n);
    if (!r || (real && (r->net != real->net || r->n != real->n || r->values != real->values))) {
      real.reset();
      break;
    }
    real = r;
  }
  if (drawn.size() >= plot::plot_palette().size()) real.reset();
  plot::PlotStyle st;
  st.width = 800, st.height = 440;
  std::vector<torch::Tensor> panels;
  for (const auto& name : metrics::table_metric_names()) {
    bool all = true;
    for (size_t k : drawn) all = all && std::isfinite(runs[k].last.count(name) ? runs[k].last.at(name) : kNaN);
    if (name != "fid" && !all) continue;
    std::vector<plot::Series> series;
    for (size_t k : drawn) {
      plot::Series f{runs[k].name, {}};
      for (double x : xs) {
        const auto it = by_run[k].find(static_cast<int64_t>(x));
        f.ys.push_back(it == by_run[k].end() ? kNaN : it->second.value(name));
      }
      series.push_back(f);
    }
    if (real && std::isfinite(real->value(name)))
      series.push_back(plot::Series{"real test images", std::vector<double>(xs.size(), real->value(name))});
    st.y_label = name;
    std::transform(st.y_label.begin(), st.y_label.end(), st.y_label.begin(), ::toupper);  // the font's letters
    if (name == "fid" && !runs[0].features.empty()) st.y_label += " (DOMAIN FEATURES)";
    panels.push_back(plot::line_plot(xs, series, st));
  }
  write_png(png_path, plot::stack_panels(panels));
}

namespace {
// The headers of earlier comparisons: such a file may be replaced too.
const char* const kSummaryHeaderV2 =
    "run,iteration,fid,class_acc,best_iteration,best_fid,best_class_acc,img_s,features,precision,recall,density,"
    "coverage,ifid";
const char* const kSummaryHeaderV1 = "run,iteration,fid,class_acc,best_iteration,best_fid,best_class_acc,img_s,features";

const io::OutputKind& compare_table() {
  static const io::OutputKind k =
      io::text_output("the output of an earlier `hamgan compare`", {run_summary_header(), kSummaryHeaderV2, kSummaryHeaderV1});
  return k;
}

}  // namespace

std::string run_summary_header() {
  std::string h = "run,iteration,best_iteration,img_s,features";
  for (const auto& m : metrics::table_metric_names()) h += "," + m;
  for (const auto& m : metrics::table_metric_names()) h += ",best_" + m;
  return h;
}

std::string compare_prefix(const std::string& out) {
  std::string prefix = out;
  for (const char* ext : {".csv", ".png"})
    if (prefix.size() > 4 && prefix.compare(prefix.size() - 4, 4, ext) == 0) prefix.resize(prefix.size() - 4);
  const std::string name = fs::path(prefix).filename().string();
  if (name.empty() || name == "." || name == "..")
    fail("--out ", out, ": names a folder; expected PREFIX, a file name without extension (compare writes PREFIX.csv "
         "and PREFIX.png), e.g. --out ", (fs::path(prefix) / "comparison").lexically_normal().string());
  return prefix;
}

void check_compare_outputs(const std::string& prefix) {
  const std::string csv = prefix + ".csv", png = prefix + ".png";
  io::check_output_path(csv, compare_table(), "--out");
  io::check_output_path(png, io::png_output(), "--out");
  // A PNG without the table beside it is no comparison's (a run's fid.png is a PNG too).
  std::error_code ec;
  if (fs::exists(png, ec) && !fs::exists(csv, ec))
    fail("--out ", png, " exists and is not the output of an earlier `hamgan compare` (there is no ", csv,
         " beside it); it is left as it is and nothing was written: choose another --out");
}

void write_run_summaries(const std::vector<RunSummary>& runs, const std::string& csv_path) {
  io::check_output_path(csv_path, compare_table());
  const auto value = [](const std::map<std::string, double>& m, const std::string& k) {
    const auto it = m.find(k);
    return it == m.end() ? kNaN : it->second;
  };
  std::ostringstream o;
  o << run_summary_header() << "\n";
  for (const auto& r : runs) {
    o << r.name << "," << r.iteration << "," << (r.best_iteration >= 0 ? std::to_string(r.best_iteration) : "") << ","
      << fmt(r.img_s, "%.1f") << "," << (r.features.empty() ? "inception" : r.features);
    for (const auto& m : metrics::table_metric_names()) o << "," << fmt(value(r.last, m), "%.4f");
    for (const auto& m : metrics::table_metric_names()) o << "," << fmt(value(r.at_best, m), "%.4f");
    o << "\n";
  }
  io::write_file_atomically(csv_path, o.str());
}

std::string ranking_table(std::vector<RunSummary> runs) {
  std::stable_sort(runs.begin(), runs.end(),
                   [](const RunSummary& a, const RunSummary& b) { return better_fid(a.fid, b.fid); });
  std::vector<std::string> shown;  // fid, then every other metric some run has
  for (const auto& m : metrics::table_metric_names())
    for (const auto& r : runs)
      if (m == "fid" || (r.last.count(m) && std::isfinite(r.last.at(m)))) {
        shown.push_back(m);
        break;
      }
  std::ostringstream o;
  o << "| rank | run | iteration |";
  for (const auto& m : shown) o << " " << m << " |";
  o << " best fid (iteration) | img/s |\n|---|---|---|";
  for (size_t i = 0; i < shown.size(); ++i) o << "---|";
  o << "---|---|\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    o << "| " << i + 1 << " | " << r.name << " | " << r.iteration << " |";
    for (const auto& m : shown) {
      const double v = r.last.count(m) ? r.last.at(m) : kNaN;
      o << " " << (m == "fid" ? (std::isfinite(v) ? fmt(v, "%.1f") : "nan") : fmt(v, "%.4g")) << " |";
    }
    o << " " << (r.best_iteration >= 0 ? fmt(r.best_fid, "%.1f") + " (" + std::to_string(r.best_iteration) + ")" : "none")
      << " | " << fmt(r.img_s, "%.1f") << " |\n";
  }
  // A failed score is said, not only ranked: the run may be fine at other checkpoints.
  for (const auto& r : runs)
    if (!r.nan_iterations.empty()) {
      o << "note: " << r.name << ": FID is not finite at iteration";
      if (r.nan_iterations.size() > 1) o << "s";
      for (size_t k = 0; k < r.nan_iterations.size(); ++k) o << (k ? ", " : " ") << r.nan_iterations[k];
      o << (std::isfinite(r.fid) ? " (never its best)" : " (ranked last; never its best)") << "\n";
    }
  return o.str();
}

}  // namespace hamgan::eval
