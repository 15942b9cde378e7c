// Whether an evaluation can be honoured, decided before anything is read: the metrics its
// feature network, reference and form allow (MetricScope, gan/eval/metric_set.h), and the
// settings each form takes, each error naming the flag or config key that asked.
#pragma once
#include "gan/config/config.h"
#include "gan/eval/eval_spec.h"
#include "gan/eval/metric_set.h"
#include "gan/eval/reference.h"
#include "metrics/feature_net.h"

namespace hamgan::eval {

// What the metrics of `spec` can be here (its feature network, reference and form), naming the
// flags or keys that asked.
MetricScope metric_scope(const EvalSpec& spec);
// Fails, before anything is read, on every request `spec` could not honour: a setting out of
// range (check_settings), a metric the network, the reference or the form cannot give
// (MetricScope), intra-class FID without classes, a real-image count with statistics or with a
// folder, a folder with fewer than 2 images.
void check_request(const EvalSpec& spec);
// eval.best_metric of scoring while training: a metric the scores compute (an automatic one
// needs what it needs: class_acc a classifier as eval.features).
void check_best_metric(const EvalSpec& spec, const std::string& best);
// Scoring while training, once its network and reference are loaded: a classifier of the GAN's
// classes, an eval.real of its kind (the training data is read as the GAN reads it), classes
// for a metric by class.
void check_scorer_fits(const EvalSpec& spec, const Config& cfg, const metrics::FeatureNet& net, const Reference& ref);
// The settings a scoring form runs with: --all resolved to the metrics that can be computed
// here (no IS from a classifier, no KID from an .npz, no ifid without classes).
EvalSettings scoring_settings(const EvalSpec& spec);

}  // namespace hamgan::eval
