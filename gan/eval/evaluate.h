// Runs an evaluation (gan/eval/eval_spec.h), whatever its form:
//   MakeReference: reference statistics (.npz) of an image directory or data source;
//   ScoreFolder: FID (and the other metrics asked) of an image directory against a reference;
//   ScoreCheckpoint: of samples drawn on the fly; ScoreRun: of every unscored checkpoint of a
//   run, into DIR/scores.csv and DIR/scores.png (gan/eval/score_table.h);
//   ScoreTestSplit: of the reference source's own test images, as a checkpoint's samples are.
// The in-training scorer (gan/eval/train_scorer.h) scores its run's checkpoints one at a time,
// with the same feature network and reference (make_feature_net, reference_options).
#pragma once
#include <memory>

#include "gan/eval/eval_spec.h"
#include "gan/eval/reference.h"

namespace hamgan::eval {

// The feature network of `s` (its classifier, else Inception, whose weights may come from
// `stored`, a checkpoint's or the run's config), announced on stderr.
std::unique_ptr<metrics::FeatureNet> make_feature_net(const EvalSettings& s, const Config* stored = nullptr);
// How to read the reference of `s` with n images, at the resolution of the classifier, else of
// `cfg`, else 32.
ReferenceOptions reference_options(const EvalSettings& s, int64_t n, const Config* cfg, const metrics::FeatureNet& net);
// What the metrics of `spec` can be here (its feature network, reference and form), naming the
// flags or keys that asked.
MetricScope metric_scope(const EvalSpec& spec);
// Fails, before anything is read, on every request `spec` could not honour: a setting out of
// range (check_settings), a metric the network, the reference or the form cannot give
// (MetricScope), intra-class FID without classes, a real-image count with statistics or with a
// folder, a folder with fewer than 2 images.
void check_request(const EvalSpec& spec);
// Checks the request, then runs it: prints scores (ScoreCheckpoint, ScoreFolder, ScoreTestSplit), writes
// scores.csv/scores.png (ScoreRun) or the .npz (MakeReference).
void evaluate(const EvalSpec& spec);

}  // namespace hamgan::eval
