// Scores a training run's checkpoints into its table (gan/eval/score_table.h): one object per
// run, built once from the evaluation's settings and the run's config, that owns what all the
// run's scores share: the feature network, the reference the samples are scored against and its
// options, the sample count, the table's metrics, and the run's TensorBoard rows
// (gan/eval/score_events.h). `hamgan fid --run` scores every unscored checkpoint with it; the
// in-training scorer (gan/eval/train_scorer.h) is an adapter that hands it one checkpoint at a
// time, and the training loop's TensorBoard log to write the rows to.
#pragma once
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "gan/checkpoint/checkpoint.h"
#include "gan/config/config.h"
#include "gan/eval/eval_spec.h"
#include "gan/eval/reference.h"
#include "gan/eval/score_events.h"
#include "gan/eval/score_run.h"
#include "metrics/feature_net.h"

namespace hamgan::eval {

class RunScorer {
 public:
  // `spec`: a ScoreRun's, its settings checked (check_request) and resolved (scoring_settings);
  // `cfg`: the run's config (its newest checkpoint's, or the one it trains with): Inception
  // weights, resolution, channels and eval.fid_n. Loads the network and the reference, and
  // fails when the run's table was scored with another network or sample count. Scoring while
  // training keeps eval.metrics; `fid --run` adds IS and KID where they can be computed.
  RunScorer(const EvalSpec& spec, const Config& cfg);

  // DIR/real_scores.csv (gan/eval/real_scores.h) where the reference is a data source with a test
  // split and the file lacks this network and count.
  void ensure_real_scores(std::ostream& log);
  // The table's rows that the run's TensorBoard view lacks, written there now (`fid --run`
  // before it scores; scoring while training does it at its first score instead).
  void add_missing_to_view(const ScoreEvents::Warn& warn);
  // One checkpoint scored: its row appended, scores.png redrawn, a line on `log`, the row in the
  // view (`view`: the training loop's log; without one, only once add_missing_to_view has
  // started the run's own file), notes once per `said`.
  ScoreRow score(const CheckpointData& c, int64_t iteration, std::ostream& log, const ScoreEvents::Warn& warn,
                 TensorBoardLog* view = nullptr, std::set<std::string>* said = nullptr);
  // Every checkpoint without a row, oldest first (score_run); damaged ones reported and listed.
  std::vector<ScoreRow> score_unscored(std::ostream& log, std::vector<std::string>* damaged);
  // Links the checkpoint as checkpoints/best_ckpt_<iteration>.pt when it is among the `keep`
  // best rows of this network and count by `metric`, then removes best files that fell out (after
  // the link: a crash leaves one too many, never one too few). Returns "; best ... so far: FILE"
  // or "".
  std::string keep_best(int64_t iteration, const std::string& checkpoint, const std::string& metric, int64_t keep) const;

  const metrics::FeatureNet& net() const { return *net_; }
  const Reference& reference() const { return ref_; }
  const RunScoreOptions& options() const { return opt_; }
  // The ranks that sample the next scores together (scoring while training); null: this one.
  void set_ranks(const EvalRanks* ranks) { opt_.ranks = ranks; }

 private:
  std::unique_ptr<metrics::FeatureNet> net_;
  Reference ref_;
  ReferenceOptions real_options_;  // the reference's, for the test split's images
  std::string real_;               // the data source whose test split to score ("" : an .npz)
  RunScoreOptions opt_;
  std::optional<ScoreEvents> events_;  // once the view has the table's earlier rows
};

// checkpoints/best_ckpt_<iteration>.pt of a run directory.
std::string best_checkpoint_path(const std::string& run_dir, int64_t iteration);

}  // namespace hamgan::eval
