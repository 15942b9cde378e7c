// A run's scores in TensorBoard, beside training's train/<key> scalars (io/tensorboard_log.h):
// each scored checkpoint's row as eval/<metric> at its iteration in DIR/tensorboard, and the real
// test images' row of DIR/real_scores.csv (gan/eval/real_scores.h) under the same tags at the same
// iterations in DIR/tensorboard/real_test. TensorBoard takes that folder for a run of its own and
// draws it in every eval chart beside the samples' curve, as a flat line: the scale the curve is
// read on (real images reach recall 0.88 and coverage 0.97, not 1).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gan/eval/score_table.h"
#include "io/tensorboard_log.h"

namespace hamgan::eval {

// The row's metric columns as eval/<metric> (the score table's order); non-finite ones too,
// which TensorBoardLog leaves out.
std::vector<std::pair<std::string, double>> score_scalars(const ScoreRow& row);

// Writes only to a run that has a TensorBoard view (DIR/tensorboard/ exists: train.tensorboard),
// each line to a new events file at its first call, without a restart marker: training's markers
// still decide which of the samples' steps stand (a resumed session drops the scores of the
// checkpoints it trains again). The real line gets each step once: its figures at a step never
// change (the table's network and count fix the test images scored).
// The samples' rows go to `rows_to`, the training loop's log, where one is given (TensorBoard draws
// a tag's points in the order it reads them, and the loop's file holds its session's rows).
// Nothing throws: the rows stand in scores.csv, and the view is a copy. An error (naming the file)
// goes to `warn` once, and nothing more goes to that line.
class ScoreEvents {
 public:
  using Warn = std::function<void(const std::string&)>;
  explicit ScoreEvents(std::string run_dir);
  // A row just scored, and the real images' point at its iteration.
  void add(const ScoreRow& row, const Warn& warn, TensorBoardLog* rows_to = nullptr);
  // The rows of the table that the view lacks, by iteration (a run whose scores went to scores.csv
  // alone), and the real line at every row that lacks it. The row of iteration `just_scored` is
  // written even where the view has that step (an earlier session's score of a checkpoint trained
  // again, which TensorBoard drops at this session's restart marker).
  void add_missing(std::vector<ScoreRow> rows, const Warn& warn, TensorBoardLog* rows_to = nullptr,
                   int64_t just_scored = -1);

 private:
  void write_row(const ScoreRow& row, const Warn& warn, TensorBoardLog* rows_to);
  // The real images' point at the row's iteration, where DIR/real_scores.csv has the row's network
  // and count and the line has no point there yet.
  void add_real(const ScoreRow& row, const Warn& warn);
  TensorBoardLog samples_, real_;
  bool samples_ok_, real_ok_;  // DIR/tensorboard/ exists, and writing that line has not failed
  std::optional<std::set<int64_t>> real_steps_;  // the real line's steps, read at its first point
  std::optional<ScoreRow> real_row_;            // DIR/real_scores.csv's row, once found
  const std::string run_dir_;
};

// A Warn that writes "warning: ..." lines to `log`.
ScoreEvents::Warn warn_on(std::ostream& log);

}  // namespace hamgan::eval
