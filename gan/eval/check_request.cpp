#include "gan/eval/check_request.h"

#include <filesystem>
#include <variant>

#include "core/error.h"
#include "gan/data/sources.h"
#include "gan/eval/reference.h"
#include "io/decode.h"
#include "metrics/feature_nets.h"
#include "metrics/image_dir.h"
#include "metrics/statistics.h"

namespace hamgan::eval {

namespace fs = std::filesystem;

namespace {

// Whether an image directory given as `path` (not an .npz, not a data source) has class
// directories: without them there are no classes for intra-class FID.
bool image_dir_without_classes(const std::string& path, DataFormat format) {
  if (is_npz(path) || format != DataFormat::Auto || detect_format(path) != DataFormat::Folder) return false;
  return !folder_labels(path, list_images(path)).defined();
}

// The same for --fake, read as fid_score reads it (metrics::sample_folder).
bool fake_dir_without_classes(const std::string& dir) { return !metrics::sample_folder(dir).labels.defined(); }

}  // namespace

MetricScope metric_scope(const EvalSpec& spec) {
  const EvalSettings& j = spec.settings;
  MetricScope s;
  s.key = j.all_metrics ? "--all" : j.keys.metrics;
  s.features_key = j.keys.features;
  s.real_key = j.keys.real;
  s.real = j.real;
  s.real_is_stats = is_npz(j.real);
  s.network = j.features.empty() ? "inception" : metrics::feature_net_kind(j.features, j.keys.features);
  if (std::holds_alternative<ScoreFolder>(spec.form))
    s.no_samples_why = "the classification accuracy score trains a classifier on a checkpoint's samples under their "
                   "classes; --fake images are not drawn here. Use --checkpoint";
  else if (std::holds_alternative<ScoreTestSplit>(spec.form))
    s.no_samples_why = "the classification accuracy score trains a classifier on a checkpoint's samples; --test-split "
                       "scores real images (`hamgan classifier train` gives a real-trained classifier's accuracy). Use "
                       "--checkpoint";
  else if (const auto* run = std::get_if<ScoreRun>(&spec.form))
    s.no_samples_why = run->while_training
                           ? "trains a classifier per checkpoint (minutes each) and has no column in scores.csv; score "
                             "a checkpoint with `hamgan fid --checkpoint CK --metrics cas`"
                           : "it trains a classifier per checkpoint (minutes each) and has no column in scores.csv; "
                             "score one checkpoint with --checkpoint";
  return s;
}

void check_request(const EvalSpec& spec) {
  const EvalSettings& j = spec.settings;
  check_settings(j);
  if (std::holds_alternative<MakeReference>(spec.form)) return;
  const auto* folder = std::get_if<ScoreFolder>(&spec.form);
  const MetricScope scope = metric_scope(spec);
  if (!j.all_metrics) check_metrics_possible(j.metrics, scope);
  if (j.real_n > 0 && folder)
    fail("--real-n ", j.real_n, ": only with --checkpoint or --run; with --fake, -n chooses the images of both "
         "--real and --fake");
  if (std::holds_alternative<ScoreTestSplit>(spec.form) && is_npz(j.real))
    fail("--test-split: ", j.keys.real, " ", j.real, " holds statistics, not images; expected the data source whose test "
         "split to score (Fashion-MNIST's directory with its t10k files, CIFAR-10's with test_batch.bin)");
  if (j.real_n > 0 && is_npz(j.real))
    fail("--real-n ", j.real_n, ": --real ", j.real, " holds statistics of images already counted (",
         "`fid stats -n` chose them); there are no real images to choose. Give --real as images or a data source, or "
         "drop --real-n");
  // The first asked metric that compares each class's real and fake images (ifid).
  std::string by_class;
  for (const auto& m : j.metrics.names)
    if (by_class.empty() && (metrics::metric_entry(m).needs & metrics::kClasses)) by_class = m;
  if (!by_class.empty() && !j.all_metrics) {
    if (image_dir_without_classes(j.real, j.format))
      fail(j.keys.metrics, " ", by_class, ": compares each class's real and fake images, and ", j.keys.real, " ", j.real,
           " has no class directories; give a data source or a folder with one directory per class, or drop ", by_class);
    if (folder && fake_dir_without_classes(folder->dir))
      fail(j.keys.metrics, " ", by_class, ": compares each class's real and fake images, and --fake ", folder->dir,
           " has no class directories (`hamgan sample` writes one per class), or drop ", by_class);
  }
}

EvalSettings scoring_settings(const EvalSpec& spec) {
  EvalSettings j = spec.settings;
  if (j.all_metrics) {
    j.metrics = possible_metrics(j.metrics, metric_scope(spec));
    const auto* folder = std::get_if<ScoreFolder>(&spec.form);
    if (j.metrics.any_needs(metrics::kClasses) &&
        (image_dir_without_classes(j.real, j.format) || (folder && fake_dir_without_classes(folder->dir))))
      for (const auto& m : MetricSet(j.metrics).names)
        if (metrics::metric_entry(m).needs & metrics::kClasses) j.metrics.remove(m);
  }
  return j;
}

void check_best_metric(const EvalSpec& spec, const std::string& best) {
  const metrics::MetricEntry& e = metrics::metric_entry(best);
  const bool classifier = metric_scope(spec).network == "classifier";
  if (!spec.settings.metrics.has(best) && !(e.automatic && (!(e.needs & metrics::kClassifier) || classifier)))
    fail("eval.best_metric ", best, ": not computed by eval.metrics '", spec.settings.metrics.text(), "'",
         (e.needs & metrics::kClassifier) ? " (class_acc needs eval.features, a domain classifier)" : "");
}

void check_scorer_fits(const EvalSpec& spec, const Config& cfg, const metrics::FeatureNet& net, const Reference& ref) {
  const EvalConfig& ec = cfg.eval;
  const EvalSettings& j = spec.settings;
  if (net.n_classes() > 0 && net.n_classes() != cfg.model.n_classes)
    fail("eval.features ", ec.features, ": a classifier of ", net.n_classes(), " classes, and the GAN draws ",
         cfg.model.n_classes, " (model.n_classes): its class accuracy would judge the samples by other classes. Train "
         "one on the GAN's data (`hamgan classifier train -c CONFIG`)");
  std::error_code ec_same;
  if (!ec.real.empty() && !fs::equivalent(ec.real, cfg.data.path, ec_same))
    check_reference_fits(ref, cfg.model.n_classes, cfg.model.image_channels, "eval.real");
  for (const auto& m : j.metrics.names)  // ifid: by class
    if ((metrics::metric_entry(m).needs & metrics::kClasses) && !ref.labels.defined())
      fail(j.keys.metrics, " ", m, ": compares each class's real and fake images, and ", j.keys.real, " ", j.real,
           " has no classes (a data source or a folder with one directory per class has them)");
}

}  // namespace hamgan::eval
