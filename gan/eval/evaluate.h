// Runs an evaluation (gan/eval/eval_spec.h), whatever its form:
//   MakeReference: reference statistics (.npz) of an image directory or data source;
//   ScoreFolder: FID (and the other metrics asked) of an image directory against a reference;
//   ScoreCheckpoint: of samples drawn on the fly; ScoreRun: of every unscored checkpoint of a
//   run, into DIR/scores.csv and DIR/scores.png (gan/eval/score_table.h);
//   ScoreTestSplit: of the reference source's own test images, as a checkpoint's samples are.
// The run scorer (gan/eval/run_scorer.h) scores a run's checkpoints for `fid --run` and, one at
// a time, for the in-training scorer (gan/eval/train_scorer.h).
#pragma once
#include <memory>

#include "gan/eval/eval_spec.h"
#include "gan/eval/check_request.h"
#include "gan/eval/reference.h"
#include "gan/eval/score_inputs.h"

namespace hamgan::eval {

// Checks the request (check_request), then runs it: prints scores (ScoreCheckpoint, ScoreFolder,
// ScoreTestSplit), writes scores.csv/scores.png (ScoreRun: gan/eval/run_scorer.h) or the .npz
// (MakeReference).
void evaluate(const EvalSpec& spec);

}  // namespace hamgan::eval
