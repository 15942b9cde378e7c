#include "gan/eval/train_scorer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "core/error.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/eval/fid_job.h"
#include "gan/eval/score_run.h"
#include "gan/train/distributed.h"
#include "io/dir_lock.h"

namespace fs = std::filesystem;

namespace hamgan::eval {

namespace {

// best_metric's value in a row (NaN when not computed) and whether lower is better.
std::pair<double, bool> metric_of(const FidRow& r, BestMetric m) {
  switch (m) {
    case BestMetric::Fid: return {r.fid, true};
    case BestMetric::Kid: return {r.kid, true};
    case BestMetric::Ifid: return {r.ifid, true};
    case BestMetric::ClassAcc: return {r.class_acc, false};
    case BestMetric::Precision: return {r.precision, false};
    case BestMetric::Recall: return {r.recall, false};
    case BestMetric::Density: return {r.density, false};
    case BestMetric::Coverage: return {r.coverage, false};
  }
  throw std::logic_error("metric_of: a BestMetric without a column");
}

// The metric set must compute best_metric; class accuracy needs a classifier.
void check_best_metric(BestMetric m, const MetricSet& set, bool classifier) {
  using B = BestMetric;
  const bool ok = m == B::Fid || (m == B::Kid && set.kid) || (m == B::Ifid && set.ifid) ||
                  (m == B::ClassAcc && classifier) || ((m == B::Precision || m == B::Recall) && set.pr) ||
                  ((m == B::Density || m == B::Coverage) && set.dc);
  if (!ok)
    fail("train.best_metric ", word_of(m, kBestMetricWords), ": not computed by train.eval_metrics '",
         metrics_text(set), "'", m == B::ClassAcc ? " (class accuracy needs train.eval_features, a domain classifier)" : "");
}

class TrainScorer {
 public:
  TrainScorer(const Config& cfg, const std::string& run_dir) : cfg_(cfg) {
    const TrainConfig& tc = cfg.train;
    FidJob j;
    j.features = tc.eval_features;
    j.real = tc.eval_real.empty() ? cfg.data.path : tc.eval_real;
    if (tc.eval_real.empty()) j.format = cfg.data.format;
    j.metrics = parse_metrics(tc.eval_metrics);
    j.device = train_device(word_of(tc.device, kDeviceWords));
    net_ = make_feature_net(j, &cfg);
    check_best_metric(tc.best_metric, j.metrics, net_->n_classes() > 0);
    check_run_net(run_dir, net_->identity());
    ReferenceOptions ro = reference_options(j, tc.eval_n, &cfg, *net_);
    ro.at_most = true;
    ref_ = load_reference(j.real, ro, *net_);
    opt_.run_dir = run_dir;
    opt_.n = tc.eval_n;
    opt_.metrics = j.metrics;
    opt_.sampler.device = j.device;
  }

  void operator()(int64_t iteration, const std::string& checkpoint, const PhaseProgress::Say& say) {
    const std::string csv = (fs::path(opt_.run_dir) / "fid.csv").string();
    if (!lock_) {  // from the first score on; a `fid --run` of this table now skips this score
      try {
        lock_.emplace(opt_.run_dir, ".fid.lock");
      } catch (const Error& e) {
        if (say) say(std::string("eval at iteration ") + std::to_string(iteration) + " skipped: " + e.what());
        return;
      }
    }
    if (scored_iterations(read_fid_csv(csv)).count(iteration)) return;  // a resumed run's last
    std::ostringstream log;
    score_checkpoint(load_checkpoint(checkpoint, opt_.sampler.device), iteration, opt_, ref_, *net_, log);
    std::string line = log.str();
    while (!line.empty() && line.back() == '\n') line.pop_back();
    const std::string best = keep_best(iteration, checkpoint, csv);
    if (say) say("eval " + line + best);
  }

 private:
  // Links this checkpoint when it is among the best K by best_metric, then removes best files
  // that fell out (after the link: a crash leaves one too many, never one too few).
  std::string keep_best(int64_t iteration, const std::string& checkpoint, const std::string& csv) {
    const TrainConfig& tc = cfg_.train;
    std::vector<std::pair<double, int64_t>> ranked;  // (value, iteration), better first
    for (const FidRow& r : read_fid_csv(csv)) {
      const auto [v, lower] = metric_of(r, tc.best_metric);
      if (std::isfinite(v)) ranked.emplace_back(lower ? v : -v, r.iteration);
    }
    std::sort(ranked.begin(), ranked.end());
    std::set<int64_t> top;
    for (size_t i = 0; i < ranked.size() && static_cast<int64_t>(i) < tc.keep_best; ++i) top.insert(ranked[i].second);
    std::string said;
    if (top.count(iteration)) {
      const std::string best = best_checkpoint_path(opt_.run_dir, iteration);
      std::error_code ec;
      fs::create_hard_link(checkpoint, best, ec);
      if (ec) fs::copy_file(checkpoint, best, fs::copy_options::overwrite_existing);
      said = "; best " + word_of(tc.best_metric, kBestMetricWords) + " so far: " + fs::path(best).filename().string();
    }
    static const std::regex re(R"(best_ckpt_(\d+)\.pt)");
    for (const auto& f : fs::directory_iterator(fs::path(opt_.run_dir) / "checkpoints")) {
      std::smatch m;
      const std::string name = f.path().filename().string();
      if (std::regex_match(name, m, re) && !top.count(std::stoll(m[1].str()))) fs::remove(f.path());
    }
    return said;
  }

  Config cfg_;
  std::optional<io::DirLock> lock_;
  std::unique_ptr<metrics::FeatureNet> net_;
  Reference ref_;
  RunScoreOptions opt_;
};

}  // namespace

std::string best_checkpoint_path(const std::string& run_dir, int64_t iteration) {
  char name[64];
  std::snprintf(name, sizeof name, "best_ckpt_%09lld.pt", static_cast<long long>(iteration));
  return (fs::path(run_dir) / "checkpoints" / name).string();
}

EvalHook make_train_scorer(const Config& cfg, const std::string& run_dir) {
  auto s = std::make_shared<TrainScorer>(cfg, run_dir);
  return [s](int64_t iteration, const std::string& checkpoint, const PhaseProgress::Say& say) {
    (*s)(iteration, checkpoint, say);
  };
}

}  // namespace hamgan::eval
