#include "gan/eval/score_run.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "gan/checkpoint/checkpoint.h"
#include "io/dir_lock.h"
#include "io/png.h"
#include "metrics/line_plot.h"

namespace hamgan::eval {

namespace fs = std::filesystem;

std::vector<std::pair<int64_t, std::string>> run_checkpoints(const std::string& run_dir) {
  const std::string dir = (fs::path(run_dir) / "checkpoints").string();
  if (!fs::is_directory(dir)) fail("--run ", run_dir, ": no checkpoints/ directory (expected a `hamgan train --out` directory)");
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& f : checkpoint_files(dir)) out.push_back({f.iteration, f.path});
  std::reverse(out.begin(), out.end());  // oldest first
  return out;
}

std::vector<std::pair<int64_t, std::string>> unscored_checkpoints(const std::string& run_dir) {
  const auto done = eval::scored_iterations(eval::read_fid_csv((fs::path(run_dir) / "fid.csv").string()));
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& c : run_checkpoints(run_dir))
    if (!done.count(c.first)) out.push_back(c);
  return out;
}

void check_run_net(const std::string& run_dir, const std::string& identity) {
  const std::string csv = (fs::path(run_dir) / "fid.csv").string();
  for (const auto& r : eval::read_fid_csv(csv))
    if (r.net != identity)
      fail(csv, ": iteration ", r.iteration, " was scored in the features of ", metrics::describe_feature_net(r.net),
           ", this score uses ", metrics::describe_feature_net(identity),
           "; FIDs of different feature networks do not mix in one table (move fid.csv aside or use the same network)");
}

void check_run_n(const std::string& run_dir, int64_t n, const std::string& key) {
  const std::string csv = (fs::path(run_dir) / "fid.csv").string();
  for (const auto& r : eval::read_fid_csv(csv))
    if (r.n != n)
      fail(csv, ": iteration ", r.iteration, " was scored with ", r.n, " samples, and ", key, " asks for ", n,
           "; FIDs of different sample counts differ by their bias alone and do not mix in one table (use ", key, " ",
           r.n, ", or move fid.csv aside)");
}

void plot_run(const std::string& run_dir) {
  const auto rows = eval::read_fid_csv((fs::path(run_dir) / "fid.csv").string());
  if (rows.empty()) return;
  std::vector<double> xs, fid, acc, ifid;
  std::vector<metrics::Series> prdc = {{"PRECISION", {}}, {"RECALL", {}}, {"DENSITY", {}}, {"COVERAGE", {}}};
  bool any_acc = false, any_prdc = false, any_ifid = false;
  for (const auto& r : rows) {
    xs.push_back(static_cast<double>(r.iteration)), fid.push_back(r.fid), acc.push_back(r.class_acc);
    ifid.push_back(r.ifid);
    for (const auto& [s, v] : {std::pair{0, r.precision}, {1, r.recall}, {2, r.density}, {3, r.coverage}}) {
      prdc[static_cast<size_t>(s)].ys.push_back(v);
      any_prdc = any_prdc || std::isfinite(v);
    }
    any_acc = any_acc || std::isfinite(r.class_acc);
    any_ifid = any_ifid || std::isfinite(r.ifid);
  }
  metrics::PlotStyle st;
  st.y_label = rows.back().net.empty() ? "FID" : "FID (DOMAIN FEATURES)";
  std::vector<torch::Tensor> panels = {metrics::line_plot(xs, fid, st)};
  if (any_acc) {
    st.y_label = "CLASS ACCURACY";
    panels.push_back(metrics::line_plot(xs, acc, st));
  }
  if (any_prdc) {  // a series with no finite point cannot be drawn: only the computed ones
    std::vector<metrics::Series> shown;
    st.y_label.clear();
    for (const auto& s : prdc)
      if (std::any_of(s.ys.begin(), s.ys.end(), [](double v) { return std::isfinite(v); })) {
        shown.push_back(s);
        st.y_label += (st.y_label.empty() ? "" : ", ") + s.name;
      }
    panels.push_back(metrics::line_plot(xs, shown, st));
  }
  if (any_ifid) {
    st.y_label = "INTRA-CLASS FID";
    panels.push_back(metrics::line_plot(xs, ifid, st));
  }
  write_png((fs::path(run_dir) / "fid.png").string(), metrics::stack_panels(panels));
}

FidRow score_checkpoint(const CheckpointData& c, int64_t iteration, const RunScoreOptions& opt, const Reference& ref,
                        const metrics::FeatureNet& net, std::ostream& log) {
  const std::string csv = (fs::path(opt.run_dir) / "fid.csv").string();
  const sample::Sampler s(c, opt.sampler, log);
  const Score sc = score_samples(s, opt.n, net, ref, opt.metrics, opt.quantize);
  eval::FidRow row;
  row.iteration = iteration;
  row.fid = sc.fid, row.is = sc.is, row.kid = sc.kid, row.n = sc.n, row.seconds = sc.seconds;
  row.class_acc = sc.class_acc.overall, row.net = net.identity();
  row.precision = sc.precision, row.recall = sc.recall, row.density = sc.density, row.coverage = sc.coverage;
  row.ifid = sc.ifid;
  eval::append_fid_row(csv, row);
  plot_run(opt.run_dir);
  log << "iteration " << iteration << ": FID " << std::setprecision(6) << sc.fid;
  if (net.n_classes() > 0) log << ", class accuracy " << metrics::format_class_accuracy(sc.class_acc);
  else if (std::isfinite(sc.is)) log << ", IS " << sc.is;
  if (std::isfinite(sc.kid)) log << ", KID " << sc.kid;  // none against an .npz reference
  if (std::isfinite(sc.precision)) log << ", precision " << sc.precision << ", recall " << sc.recall;
  if (std::isfinite(sc.density)) log << ", density " << sc.density << ", coverage " << sc.coverage;
  if (std::isfinite(sc.ifid)) log << ", intra-class FID " << sc.ifid;
  log << " (" << std::fixed << std::setprecision(1) << sc.seconds << " s)\n" << std::defaultfloat;
  for (const auto& w : sc.warnings) log << "warning: iteration " << iteration << ": " << w << "\n";
  log << std::flush;
  return row;
}

std::vector<eval::FidRow> score_run(const RunScoreOptions& opt, const Reference& ref,
                                    const metrics::FeatureNet& net, std::ostream& log,
                                    std::vector<std::string>* damaged) {
  const std::string csv = (fs::path(opt.run_dir) / "fid.csv").string();
  // One scorer per run at a time: two would each append every row (issue 24). Training's own
  // lock is another file, so a run can be scored while it trains.
  const io::DirLock lock(opt.run_dir, ".fid.lock");
  check_run_net(opt.run_dir, net.identity());
  check_run_n(opt.run_dir, opt.n, opt.n_key);
  std::vector<eval::FidRow> added;
  bool said_kid = false;
  for (const auto& [iteration, path] : unscored_checkpoints(opt.run_dir)) {
    if (!ref.pool.defined() && !said_kid) log << "note: " << ref.no_kid_why << "; the kid column stays empty\n";
    said_kid = true;
    log << "scoring " << path << " (" << opt.n << " samples)\n" << std::flush;
    std::optional<CheckpointData> c;
    try {
      c = load_checkpoint(path, opt.sampler.device);
    } catch (const Error& e) {  // one damaged checkpoint must not hide the scores of the rest
      std::error_code ec;
      if (!fs::exists(path, ec)) {  // pruned by a training run meanwhile: gone, not damaged
        log << "note: " << path << " was deleted before it was scored (pruned by training?); skipped\n" << std::flush;
        continue;
      }
      log << "warning: skipping " << path << ": " << e.what() << "\n" << std::flush;
      if (damaged) damaged->push_back(path);
      continue;
    }
    added.push_back(score_checkpoint(*c, iteration, opt, ref, net, log));
  }
  if (added.empty() && (!damaged || damaged->empty())) log << "every checkpoint already has a row in " << csv << "\n";
  plot_run(opt.run_dir);
  return added;
}

}  // namespace hamgan::eval
