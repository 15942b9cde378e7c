#include "gan/eval/train_scorer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <sys/stat.h>

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
#include "core/rng_scope.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/eval/evaluate.h"
#include "gan/eval/real_scores.h"
#include "gan/eval/score_events.h"
#include "gan/eval/score_run.h"
#include "gan/train/distributed.h"
#include "gan/train/tensorboard_log.h"
#include "io/dir_lock.h"

namespace fs = std::filesystem;

namespace hamgan::eval {

namespace {

// A file's identity: a checkpoint rewritten (written to a temporary, renamed over) is another.
struct FileId {
  uint64_t dev = 0, ino = 0;
  int64_t mtime_ns = 0, size = 0;
  bool operator==(const FileId& o) const {
    return dev == o.dev && ino == o.ino && mtime_ns == o.mtime_ns && size == o.size;
  }
};

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                static_cast<int64_t>(st.st_size)};
}

bool every(int64_t interval, int64_t iteration) { return interval > 0 && iteration > 0 && iteration % interval == 0; }

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return !a.empty() && !b.empty() && fs::equivalent(a, b, ec);
}

// The metric set must compute best_metric (an automatic one needs what it needs: class_acc a
// classifier).
void check_best_metric(const std::string& best, const MetricSet& set, bool classifier) {
  const metrics::MetricEntry& e = metrics::metric_entry(best);
  const bool ok = set.has(best) || (e.automatic && (!(e.needs & metrics::kClassifier) || classifier));
  if (!ok)
    fail("eval.best_metric ", best, ": not computed by eval.metrics '", set.text(), "'",
         (e.needs & metrics::kClassifier) ? " (class_acc needs eval.features, a domain classifier)" : "");
}

class TrainScorer {
 public:
  TrainScorer(const Config& cfg, const std::string& run_dir) : cfg_(cfg) {
    const EvalConfig& ec = cfg.eval;
    const EvalSpec spec = eval_spec_from_config(cfg, run_dir);
    const EvalSettings& j = spec.settings;
    // A score draws from the default generators as training does (the generator built to load
    // the checkpoint initialises its weights from them, a Hamburger draws its random bases): on a
    // stream of its own it neither moves training's (eval.every would change the run) nor
    // depends on when it runs.
    const RngScope rng(j.device, kScoringSeed);  // loading a classifier initialises one first
    // Every request checked before anything is read: a metric that cannot be computed here is an
    // error naming the key, not an empty column.
    check_request(spec);
    check_best_metric(ec.best_metric, j.metrics, !j.features.empty());
    check_run_n(run_dir, ec.n, j.keys.n);
    net_ = make_feature_net(j, &cfg);
    if (net_->n_classes() > 0 && net_->n_classes() != cfg.model.n_classes)
      fail("eval.features ", ec.features, ": a classifier of ", net_->n_classes(),
           " classes, and the GAN draws ", cfg.model.n_classes, " (model.n_classes): its class accuracy would judge "
           "the samples by other classes. Train one on the GAN's data (`hamgan classifier train -c CONFIG`)");
    check_run_net(run_dir, net_->identity());
    ReferenceOptions ro = reference_options(j, j.n, &cfg, *net_);
    ro.at_most = true;
    if (ro.channels == 0) ro.channels = cfg.model.image_channels;  // a data source read as the GAN's images
    ref_ = load_reference(j.real, ro, *net_);
    if (!is_npz(j.real)) real_ = j.real, real_options_ = ro;
    // The training data is what the GAN learns, converted to its channels; another reference must
    // already be of its kind.
    if (!ec.real.empty() && !same_file(ec.real, cfg.data.path))
      check_reference_fits(ref_, cfg.model.n_classes, cfg.model.image_channels, "eval.real");
    for (const auto& m : j.metrics.names)  // ifid: by class
      if ((metrics::metric_entry(m).needs & metrics::kClasses) && !ref_.labels.defined())
        fail(j.keys.metrics, " ", m, ": compares each class's real and fake images, and ", j.keys.real, " ",
             j.real, " has no classes (a data source or a folder with one directory per class has them)");
    opt_.run_dir = run_dir;
    opt_.n = j.n;
    opt_.n_key = j.keys.n;
    opt_.metrics = j.metrics;
    opt_.sampler.device = j.device;
    // The checkpoints of earlier sessions: a row for one of them was written after it, by an
    // earlier score. A checkpoint this session writes is new, whatever rows say.
    const std::string dir = (fs::path(run_dir) / "checkpoints").string();
    if (fs::is_directory(dir))
      for (const auto& [it, path] : run_checkpoints(run_dir))
        if (const auto id = file_id(path)) before_[it] = *id;
  }

  void operator()(int64_t iteration, const std::string& checkpoint, const PhaseProgress::Say& say) {
    const std::string csv = scores_csv(opt_.run_dir);
    if (!lock_) {  // from the first score on; a `fid --run` of this table now skips this score
      try {
        lock_.emplace(opt_.run_dir, ".fid.lock");
      } catch (const Error& e) {
        if (say) say(std::string("eval at iteration ") + std::to_string(iteration) + " skipped: " + e.what());
        return;
      }
    }
    const RngScope rng(opt_.sampler.device, kScoringSeed);
    if (!real_.empty()) {  // once: the real test images' scores, as `fid --run` keeps them
      std::ostringstream log;
      try {
        ensure_real_scores(opt_.run_dir, real_, real_options_, opt_.n, [this] { return ref_; }, *net_, opt_.metrics,
                           log);
      } catch (const Error& e) {  // a line in scores.png is not worth stopping training for
        log << "real test images' scores skipped: " << e.what() << "\n";
      }
      real_.clear();
      std::string line = log.str();
      while (!line.empty() && line.back() == '\n') line.pop_back();
      if (say && !line.empty()) say("eval: " + line);
    }
    if (!filled_gaps_) {  // once: eval points an earlier session wrote but never scored (killed, failed)
      filled_gaps_ = true;
      const std::set<int64_t> scored = scored_iterations(read_run_scores(opt_.run_dir));
      for (const auto& [it, path] : run_checkpoints(opt_.run_dir)) {
        if (it >= iteration || !every(cfg_.eval.every, it) || scored.count(it)) continue;
        std::optional<CheckpointData> c;
        try {
          c = load_checkpoint(path, opt_.sampler.device);
        } catch (const Error& e) {  // an old damaged checkpoint must not stop training
          if (say) say("eval of unscored " + path + " skipped: " + e.what());
          continue;
        }
        score(*c, it, path, csv, say, " (left unscored by an earlier session)");
      }
    }
    if (scored_iterations(read_run_scores(opt_.run_dir)).count(iteration)) {
      // A row made before this checkpoint was written is about another one (a stale or hand-made
      // row): replaced. Only a checkpoint of an earlier session (a finished run's end, scored
      // then) keeps its row.
      const auto was = before_.find(iteration);
      const auto now = file_id(checkpoint);
      if (was != before_.end() && now && was->second == *now) return;
      const int64_t removed = remove_run_scores(opt_.run_dir, iteration);
      if (say) say("eval: " + std::to_string(removed) + " row(s) of iteration " + std::to_string(iteration) + " in " +
                   csv + " predate its checkpoint; replaced by its score");
    }
    score(load_checkpoint(checkpoint, opt_.sampler.device), iteration, checkpoint, csv, say, "");
  }

 private:
  void score(const CheckpointData& c, int64_t iteration, const std::string& checkpoint, const std::string& csv,
             const PhaseProgress::Say& say, const std::string& why) {
    std::ostringstream log;
    const ScoreRow r = score_checkpoint(c, iteration, opt_, ref_, *net_, log);
    if (TensorBoardLog* tb = active_tensorboard_log()) {  // scores.csv's metric columns as eval/<metric>
      const ScoreEvents::Warn warn = [&](const std::string& what) {
        if (say) say("eval: iteration " + std::to_string(iteration) + ": " + what);
      };
      if (!events_) {  // the first score: among the table's rows that the view lacks, in order
        events_.emplace(opt_.run_dir);
        events_->add_missing(read_run_scores(opt_.run_dir), warn, tb, iteration);
      } else {
        events_->add(r, warn, tb);  // and the real images' point
      }
    }
    std::string line = log.str();
    while (!line.empty() && line.back() == '\n') line.pop_back();
    const std::string best = keep_best(iteration, checkpoint, csv);
    if (say) say("eval " + line + why + best);
  }

  // Links this checkpoint when it is among the best K by best_metric, then removes best files
  // that fell out (after the link: a crash leaves one too many, never one too few).
  std::string keep_best(int64_t iteration, const std::string& checkpoint, const std::string& csv) {
    const EvalConfig& tc = cfg_.eval;
    std::vector<std::pair<double, int64_t>> ranked;  // (value, iteration), better first
    const bool lower = metrics::lower_is_better(tc.best_metric);
    for (const ScoreRow& r : read_run_scores(opt_.run_dir)) {
      if (r.n != tc.n || r.net != net_->identity()) continue;  // only scores that compare
      const double v = r.value(tc.best_metric);
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
      said = "; best " + tc.best_metric + " so far: " + fs::path(best).filename().string();
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
  std::map<int64_t, FileId> before_;  // by iteration: the checkpoints present when training started
  bool filled_gaps_ = false;
  std::string real_;              // the data source whose test split is still to be scored ("" once done, or none)
  ReferenceOptions real_options_;
  std::optional<io::DirLock> lock_;
  std::optional<ScoreEvents> events_;  // where training writes its TensorBoard view
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
