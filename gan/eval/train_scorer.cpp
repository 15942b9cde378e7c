#include "gan/eval/train_scorer.h"

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/rng_scope.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/eval/check_request.h"
#include "gan/eval/rank_scorer.h"
#include "gan/eval/rank_share.h"
#include "gan/eval/run_scorer.h"
#include "io/dir_lock.h"
#include "io/file_identity.h"

namespace fs = std::filesystem;

namespace hamgan::eval {

namespace {

bool every(int64_t interval, int64_t iteration) { return interval > 0 && iteration > 0 && iteration % interval == 0; }

class TrainScorer {
 public:
  TrainScorer(const Config& cfg, const std::string& run_dir) : cfg_(cfg), run_dir_(run_dir) {
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
    check_best_metric(spec, ec.best_metric);
    scorer_.emplace(spec, cfg);
    check_scorer_fits(spec, cfg, scorer_->net(), scorer_->reference());
    // The checkpoints of earlier sessions: a row for one of them was written after it, by an
    // earlier score. A checkpoint this session writes is new, whatever rows say.
    if (fs::is_directory(fs::path(run_dir) / "checkpoints"))
      for (const auto& [it, path] : run_checkpoints(run_dir))
        if (const auto id = io::file_id(path)) before_[it] = *id;
  }

  void operator()(int64_t iteration, const std::string& checkpoint, const PhaseProgress::Say& say,
                  TensorBoardLog* view, const EvalRanks& ranks) {
    const Released released{ranks};
    scorer_->set_ranks(&ranks);
    if (!lock_) {  // from the first score on; a `fid --run` of this table now skips this score
      try {
        lock_.emplace(run_dir_, ".fid.lock");
      } catch (const Error& e) {
        if (say) say(std::string("eval at iteration ") + std::to_string(iteration) + " skipped: " + e.what());
        return;
      }
    }
    const RngScope rng(scorer_->options().sampler.device, kScoringSeed);
    if (!real_done_) {  // once: the real test images' scores, as `fid --run` keeps them
      real_done_ = true;
      std::ostringstream log;
      try {
        scorer_->ensure_real_scores(log);
      } catch (const Error& e) {  // a line in scores.png is not worth stopping training for
        log << "real test images' scores skipped: " << e.what() << "\n";
      }
      if (say && !log.str().empty()) say("eval: " + trimmed(log.str()));
    }
    if (!filled_gaps_) {  // once: eval points an earlier session wrote but never scored (killed, failed)
      filled_gaps_ = true;
      const std::set<int64_t> scored = scored_iterations(read_run_scores(run_dir_));
      for (const auto& [it, path] : run_checkpoints(run_dir_)) {
        if (it >= iteration || !every(cfg_.eval.every, it) || scored.count(it)) continue;
        std::optional<CheckpointData> c;
        try {
          c = load_checkpoint(path, scorer_->options().sampler.device);
        } catch (const Error& e) {  // an old damaged checkpoint must not stop training
          if (say) say("eval of unscored " + path + " skipped: " + e.what());
          continue;
        }
        score(*c, it, path, say, view, " (left unscored by an earlier session)");
      }
    }
    if (scored_iterations(read_run_scores(run_dir_)).count(iteration)) {
      // A row made before this checkpoint was written is about another one (a stale or hand-made
      // row): replaced. Only a checkpoint of an earlier session (a finished run's end, scored
      // then) keeps its row.
      const auto was = before_.find(iteration);
      const auto now = io::file_id(checkpoint);
      if (was != before_.end() && now && was->second == *now) return;
      const int64_t removed = remove_run_scores(run_dir_, iteration);
      if (say) say("eval: " + std::to_string(removed) + " row(s) of iteration " + std::to_string(iteration) + " in " +
                   scores_csv(run_dir_) + " predate its checkpoint; replaced by its score");
    }
    score(load_checkpoint(checkpoint, scorer_->options().sampler.device), iteration, checkpoint, say, view, "");
  }

 private:
  static std::string trimmed(std::string s) {
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }

  // The other ranks stand by from the call on until rank 0 says it is done, whichever way it
  // leaves (a skipped score, an error that ends the run).
  struct Released {
    const EvalRanks& ranks;
    ~Released() {
      if (ranks.world > 1) try {
          ranks.tell(kScoresDone);
        } catch (...) {  // rank 0's store is gone: the others learn it from their next collective
        }
    }
  };

  void score(const CheckpointData& c, int64_t iteration, const std::string& checkpoint, const PhaseProgress::Say& say,
             TensorBoardLog* view, const std::string& why) {
    const RngScope rng(scorer_->options().sampler.device, kScoringSeed);  // each score draws alike, on every rank
    std::ostringstream log;
    const ScoreEvents::Warn warn = [&](const std::string& what) {
      if (say) say("eval: iteration " + std::to_string(iteration) + ": " + what);
    };
    scorer_->score(c, iteration, log, warn, view);
    const std::string best = scorer_->keep_best(iteration, checkpoint, cfg_.eval.best_metric, cfg_.eval.keep_best);
    if (say) say("eval " + trimmed(log.str()) + why + best);
  }

  Config cfg_;
  std::string run_dir_;
  std::optional<RunScorer> scorer_;
  std::map<int64_t, io::FileId> before_;  // by iteration: the checkpoints present when training started
  bool filled_gaps_ = false, real_done_ = false;
  std::optional<io::DirLock> lock_;
};

}  // namespace

EvalHook make_train_scorer(const Config& cfg, const std::string& run_dir, int rank, std::optional<torch::Device> device) {
  if (rank != 0) return make_rank_scorer(cfg, run_dir, device ? *device : torch::Device(torch::kCPU));
  auto s = std::make_shared<TrainScorer>(cfg, run_dir);
  return [s](int64_t iteration, const std::string& checkpoint, const PhaseProgress::Say& say, TensorBoardLog* view,
             const EvalRanks& ranks) { (*s)(iteration, checkpoint, say, view, ranks); };
}

}  // namespace hamgan::eval
