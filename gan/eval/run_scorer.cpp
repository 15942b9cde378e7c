#include "gan/eval/run_scorer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include "core/error.h"
#include "core/parse_number.h"
#include "gan/eval/check_request.h"
#include "gan/eval/real_scores.h"
#include "gan/eval/score_inputs.h"
#include "io/decode.h"

namespace fs = std::filesystem;

namespace hamgan::eval {

RunScorer::RunScorer(const EvalSpec& spec, const Config& cfg) {
  const EvalSettings& j = spec.settings;
  const auto& form = std::get<ScoreRun>(spec.form);
  opt_.run_dir = form.dir;
  opt_.n = sample_count(j, cfg);
  opt_.n_key = j.keys.n;
  check_run_n(form.dir, opt_.n, opt_.n_key);
  net_ = make_feature_net(j, &cfg);
  check_run_net(form.dir, net_->identity());
  ref_ = samples_reference(j, opt_.n, cfg, *net_, &real_options_);
  if (!is_npz(j.real)) real_ = j.real;
  opt_.sampler = j.sampler;
  opt_.quantize = j.quantize;
  opt_.metrics = j.metrics;
  if (!form.while_training) {  // a run's table from `fid --run` has IS (Inception) and KID where possible
    for (const char* m : {"is", "kid"}) opt_.metrics.add(m);
    opt_.metrics = possible_metrics(opt_.metrics, metric_scope(spec));
  }
}

void RunScorer::ensure_real_scores(std::ostream& log) {
  if (real_.empty()) return;
  eval::ensure_real_scores(opt_.run_dir, real_, real_options_, opt_.n, [this] { return ref_; }, *net_, opt_.metrics,
                           log);
}

void RunScorer::add_missing_to_view(const ScoreEvents::Warn& warn) {
  events_.emplace(opt_.run_dir);
  events_->add_missing(read_run_scores(opt_.run_dir), warn);
}

ScoreRow RunScorer::score(const CheckpointData& c, int64_t iteration, std::ostream& log, const ScoreEvents::Warn& warn,
                          TensorBoardLog* view, std::set<std::string>* said) {
  const ScoreRow r = score_checkpoint(c, iteration, opt_, ref_, *net_, log, said);
  if (!events_ && !view) return r;  // training without a TensorBoard view
  if (events_) {
    events_->add(r, warn, view);  // and the real images' point
  } else {  // the first score: among the table's rows that the view lacks, in order
    events_.emplace(opt_.run_dir);
    events_->add_missing(read_run_scores(opt_.run_dir), warn, view, iteration);
  }
  return r;
}

std::vector<ScoreRow> RunScorer::score_unscored(std::ostream& log, std::vector<std::string>* damaged) {
  if (!events_) add_missing_to_view(warn_on(log));
  return score_run(opt_, ref_, *net_, log, damaged, &*events_);
}

std::string RunScorer::keep_best(int64_t iteration, const std::string& checkpoint, const std::string& metric,
                                 int64_t keep) const {
  std::vector<std::pair<double, int64_t>> ranked;  // (value, iteration), better first
  const bool lower = metrics::lower_is_better(metric);
  for (const ScoreRow& r : read_run_scores(opt_.run_dir)) {
    if (r.n != opt_.n || r.net != net_->identity()) continue;  // only scores that compare
    const double v = r.value(metric);
    if (std::isfinite(v)) ranked.emplace_back(lower ? v : -v, r.iteration);
  }
  std::sort(ranked.begin(), ranked.end());
  std::set<int64_t> top;
  for (size_t i = 0; i < ranked.size() && static_cast<int64_t>(i) < keep; ++i) top.insert(ranked[i].second);
  std::string said;
  if (top.count(iteration)) {
    const std::string best = best_checkpoint_path(opt_.run_dir, iteration);
    std::error_code ec;
    fs::create_hard_link(checkpoint, best, ec);
    if (ec) fs::copy_file(checkpoint, best, fs::copy_options::overwrite_existing);
    said = "; best " + metric + " so far: " + fs::path(best).filename().string();
  }
  static const std::regex re(R"(best_ckpt_(\d+)\.pt)");
  for (const auto& f : fs::directory_iterator(fs::path(opt_.run_dir) / "checkpoints")) {
    std::smatch m;
    const std::string name = f.path().filename().string();
    int64_t it = 0;  // a name whose number no iteration has is not one of ours: left alone
    if (std::regex_match(name, m, re) && parse_int(m[1].str(), it) && !top.count(it)) fs::remove(f.path());
  }
  return said;
}

std::string best_checkpoint_path(const std::string& run_dir, int64_t iteration) {
  char name[64];
  std::snprintf(name, sizeof name, "best_ckpt_%09lld.pt", static_cast<long long>(iteration));
  return (fs::path(run_dir) / "checkpoints" / name).string();
}

}  // namespace hamgan::eval
