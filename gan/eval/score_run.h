// Scores every checkpoint of a training run that has no row yet in its score table
// (gan/eval/score_table.h): for each (oldest first) it samples n images, computes the asked
// metrics, appends a row (flushed and fsync'ed, so a crash loses at most the running one) and
// redraws DIR/scores.png: one panel per metric with a value, against iteration. A table scored
// with another feature network or sample count is refused.
#pragma once
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "gan/checkpoint/checkpoint_hook.h"
#include "gan/eval/score_events.h"
#include "gan/eval/score_table.h"
#include "gan/eval/score.h"

namespace hamgan::eval {

struct RunScoreOptions {
  std::string run_dir;  // holds checkpoints/ckpt_*.pt
  int64_t n = 10000;
  std::string n_key = "-n";  // what set n, for errors
  sample::SamplerOptions sampler;
  bool quantize = true;
  MetricSet metrics;  // the table's metrics (fid and the automatic ones always)
  // Scoring while training: the run's ranks, which sample together (gan/eval/rank_share.h);
  // null or one rank: this process samples alone.
  const EvalRanks* ranks = nullptr;
};

// (iteration, path) of DIR/checkpoints/ckpt_<iteration>.pt, oldest first.
std::vector<std::pair<int64_t, std::string>> run_checkpoints(const std::string& run_dir);
// The checkpoints of run_checkpoints() whose iteration has no row in the run's table yet.
std::vector<std::pair<int64_t, std::string>> unscored_checkpoints(const std::string& run_dir);
// Returns the rows added. `log` gets progress and the once-only notes (no KID, no EMA).
// A checkpoint that does not load is reported on `log`, added to `damaged` and skipped; the
// others are still scored. With `events`, each row goes to the run's TensorBoard view as it is
// written (an error there a warning on `log`).
std::vector<ScoreRow> score_run(const RunScoreOptions& opt, const Reference& ref,
                                    const metrics::FeatureNet& net, std::ostream& log,
                                    std::vector<std::string>* damaged = nullptr, ScoreEvents* events = nullptr);
// One checkpoint of the run (already loaded) scored, its row appended to DIR/scores.csv, scores.png
// redrawn, a line on `log`; the row. score_run's step and the in-training scorer's. With
// `said`, the score's notes (why KID has no spread) not yet in it go to `log` and into it.
ScoreRow score_checkpoint(const CheckpointData& c, int64_t iteration, const RunScoreOptions& opt, const Reference& ref,
                        const metrics::FeatureNet& net, std::ostream& log, std::set<std::string>* said = nullptr);
// Error unless every row of the run's table was scored with feature network `identity`.
void check_run_net(const std::string& run_dir, const std::string& identity);
// Error naming `key` (the flag or config key that set n) unless every row of the run's table was
// scored with n samples: FIDs of 50 and of 2000 samples differ by their bias alone, and a table
// (and the best checkpoint picked from it) must not mix them.
void check_run_n(const std::string& run_dir, int64_t n, const std::string& key);
// Redraws DIR/scores.png from the run's table (nothing when it has no rows).
void plot_run(const std::string& run_dir);

}  // namespace hamgan::eval
