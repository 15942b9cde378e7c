#include "gan/eval/score_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/eval/rank_share.h"
#include "gan/eval/real_scores.h"
#include "io/dir_lock.h"
#include "io/output_path.h"
#include "io/png.h"
#include "metrics/feature_nets.h"
#include "plot/line_plot.h"

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
  const auto done = scored_iterations(read_run_scores(run_dir));
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& c : run_checkpoints(run_dir))
    if (!done.count(c.first)) out.push_back(c);
  return out;
}

void check_run_net(const std::string& run_dir, const std::string& identity) {
  const std::string csv = run_score_table(run_dir);
  for (const auto& r : read_score_table(csv))
    if (r.net != identity)
      fail(csv, ": iteration ", r.iteration, " was scored in the features of ", metrics::describe_feature_net(r.net),
           ", this score uses ", metrics::describe_feature_net(identity),
           "; FIDs of different feature networks do not mix in one table (move the table aside or use the same network)");
}

void check_run_n(const std::string& run_dir, int64_t n, const std::string& key) {
  const std::string csv = run_score_table(run_dir);
  for (const auto& r : read_score_table(csv))
    if (r.n != n)
      fail(csv, ": iteration ", r.iteration, " was scored with ", r.n, " samples, and ", key, " asks for ", n,
           "; FIDs of different sample counts differ by their bias alone and do not mix in one table (use ", key, " ",
           r.n, ", or move ", csv, " aside)");
}

void plot_run(const std::string& run_dir) {
  const auto rows = read_run_scores(run_dir);
  if (rows.empty()) return;
  std::vector<double> xs;
  for (const auto& r : rows) xs.push_back(static_cast<double>(r.iteration));
  // The real test images' figures in the same features, a flat line beside the samples' where
  // there are some (gan/eval/real_scores.h).
  const std::optional<ScoreRow> real = real_scores_of(run_dir, rows.back().net, rows.back().n);
  plot::PlotStyle st;
  std::vector<torch::Tensor> panels;
  for (const auto& name : metrics::table_metric_names()) {  // a panel per metric with a finite value
    std::vector<double> ys;
    for (const auto& r : rows) ys.push_back(r.value(name));
    if (std::none_of(ys.begin(), ys.end(), [](double v) { return std::isfinite(v); })) continue;
    // FID is named as its features' distance (fd_dinov2 in DINOv2's: never read as FID).
    const std::string distance = metrics::distance_name(rows.back().net);
    st.y_label = name == "fid" ? distance : name;
    std::transform(st.y_label.begin(), st.y_label.end(), st.y_label.begin(), ::toupper);  // the font's letters
    if (name == "fid" && distance == "fid" && !rows.back().net.empty()) st.y_label += " (DOMAIN FEATURES)";
    if (real && std::isfinite(real->value(name)))
      panels.push_back(plot::line_plot(
          xs, {plot::Series{"samples", ys}, plot::Series{"real test images", std::vector<double>(xs.size(), real->value(name))}},
          st));
    else
      panels.push_back(plot::line_plot(xs, ys, st));
  }
  if (!panels.empty()) write_png(scores_png(run_dir), plot::stack_panels(panels));
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// score_samples with every rank of opt.ranks sampling its share.
Score score_shared(const CheckpointData& c, const RunScoreOptions& opt, const Reference& ref,
                   const metrics::FeatureNet& net, std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  const metrics::Features f = shared_sample_features(&c, opt.n, opt.sampler, net, opt.quantize,
                                                     wants_logits(net, opt.metrics), *opt.ranks, log);
  const double sampled = seconds_since(t0);
  Score sc = score_features(f, ref, net, opt.metrics);
  sc.sample_seconds = sampled;
  sc.seconds = seconds_since(t0);
  return sc;
}

}  // namespace

ScoreRow score_checkpoint(const CheckpointData& c, int64_t iteration, const RunScoreOptions& opt, const Reference& ref,
                          const metrics::FeatureNet& net, std::ostream& log, std::set<std::string>* said) {
  // scores.png is redrawn after the row is appended: a path it may not replace is refused here,
  // before the score, so that such a refusal is true when it says nothing was written.
  io::check_output_path(scores_png(opt.run_dir), io::png_output());
  const Score sc = opt.ranks && opt.ranks->world > 1 ? score_shared(c, opt, ref, net, log)
                                                     : score_samples(sample::Sampler(c, opt.sampler, log), opt.n, net,
                                                                     ref, opt.metrics, opt.quantize);
  ScoreRow row;
  row.iteration = iteration, row.n = sc.n, row.seconds = sc.seconds, row.net = net.identity();
  for (const auto& [name, v] : sc.values) row.values[name] = v.value;
  append_run_score(opt.run_dir, row);
  try {
    plot_run(opt.run_dir);
  } catch (const Error& e) {  // the row is kept: say so, not only why the figure failed
    fail("iteration ", iteration, ": its row was written to ", scores_csv(opt.run_dir), ", but ", scores_png(opt.run_dir),
         " was not redrawn: ", e.what());
  }
  log << "iteration " << iteration << ": " << score_line(sc);
  log << " (" << std::fixed << std::setprecision(1) << sc.seconds << " s)\n" << std::defaultfloat;
  for (const auto& w : sc.warnings) log << "warning: iteration " << iteration << ": " << w << "\n";
  if (said)
    for (const auto& note : sc.notes)
      if (said->insert(note).second) log << "note: " << note << "\n";
  log << std::flush;
  return row;
}

std::vector<ScoreRow> score_run(const RunScoreOptions& opt, const Reference& ref, const metrics::FeatureNet& net,
                                std::ostream& log, std::vector<std::string>* damaged, ScoreEvents* events) {
  const std::string csv = scores_csv(opt.run_dir);
  // One scorer per run at a time: two would each append every row. Training's own
  // lock is another file, so a run can be scored while it trains.
  const io::DirLock lock(opt.run_dir, ".fid.lock");
  check_run_net(opt.run_dir, net.identity());
  check_run_n(opt.run_dir, opt.n, opt.n_key);
  std::vector<ScoreRow> added;
  bool said_kid = false;
  std::set<std::string> said;  // notes once per run, not once per checkpoint
  for (const auto& [iteration, path] : unscored_checkpoints(opt.run_dir)) {
    if (!ref.pool.defined() && !said_kid) log << "note: " << ref.no_kid_why << "; its columns of real-feature metrics stay empty\n";
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
    added.push_back(score_checkpoint(*c, iteration, opt, ref, net, log, &said));
    if (events) events->add(added.back(), warn_on(log));
  }
  if (added.empty() && (!damaged || damaged->empty())) log << "every checkpoint already has a row in " << csv << "\n";
  plot_run(opt.run_dir);
  return added;
}

}  // namespace hamgan::eval
