#include "gan/eval/evaluate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <type_traits>
#include <variant>

#include "core/error.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/config/config.h"
#include "gan/data/sources.h"
#include "gan/data/subset.h"
#include "gan/data/test_split.h"
#include "gan/eval/cas.h"
#include "gan/eval/real_scores.h"
#include "gan/eval/reference.h"
#include "gan/eval/score.h"
#include "gan/eval/score_run.h"
#include "gan/eval/score_table.h"
#include "gan/sample/plan.h"
#include "io/decode.h"
#include "io/output_path.h"
#include "metrics/class_accuracy.h"
#include "metrics/classifier.h"
#include "metrics/frechet.h"
#include "metrics/image_dir.h"
#include "metrics/inception.h"
#include "metrics/inception_score.h"
#include "metrics/kid.h"
#include "metrics/statistics.h"

namespace hamgan::eval {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}


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
  s.classifier = !j.features.empty();
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

// --features, else Inception: --inception > $HAMGAN_INCEPTION > eval.inception of -c (else of
// `stored`, a checkpoint's config).
std::unique_ptr<metrics::FeatureNet> make_feature_net(const EvalSettings& j, const Config* stored) {
  const torch::Device dev = j.device;
  if (!j.features.empty()) {
    if (!j.inception.empty()) fail("--features and --inception: choose one feature network");
    auto net = std::make_unique<metrics::ClassifierExtractor>(j.features, dev);
    const auto& i = net->info();
    std::cerr << "features: " << j.features << " (" << net->identity() << ", "
              << i.options.n_classes << " classes, " << i.options.resolution << "x" << i.options.resolution << "x"
              << i.options.channels << ")\n";
    return net;
  }
  std::string path;
  std::string cfg_path;
  if (!j.inception_config.empty()) cfg_path = load_config(j.inception_config).eval.inception;
  else if (stored) cfg_path = stored->eval.inception;
  if (!j.inception.empty()) path = j.inception;
  else if (const char* e = std::getenv("HAMGAN_INCEPTION"); e && *e) path = e;
  else if (!cfg_path.empty()) path = cfg_path;
  else fail("--inception PATH is required (or set HAMGAN_INCEPTION, or eval.inception in the config); "
            "scripts/download_inception.sh fetches pt_inception-2015-12-05-6726825d.pth");
  return std::make_unique<metrics::InceptionExtractor>(path, metrics::parse_resize(j.resize), dev,
                                                       j.channels_last);
}

namespace {


// With a domain classifier: the class accuracy of labelled features (folder classes, data
// source labels), printed; NaN when there are no labels.
double report_class_accuracy(const metrics::Features& f, const metrics::FeatureNet& net, const std::string& what) {
  if (net.n_classes() == 0) return std::nan("");
  if (!f.labels.defined()) {
    std::cout << "class_acc: none (" << what << " has no class subdirectories)\n";
    return std::nan("");
  }
  const auto a = metrics::class_accuracy(f.logits, f.labels, what);
  std::cout << "class_acc " << metrics::format_class_accuracy(a) << "\n";
  return a.overall;
}

metrics::Features features_of(const std::string& dir, const metrics::FeatureNet& net, const EvalSettings& j,
                              bool want_logits, std::string* described = nullptr) {
  const auto files = chosen_images(dir, j.n, /*at_most=*/false, /*seed=*/0, described);
  const auto t0 = std::chrono::steady_clock::now();
  metrics::Features f = metrics::extract_features(
      net, metrics::image_batches(files, net, j.batch, static_cast<int>(j.workers)), want_logits);
  f.labels = folder_labels(dir, files);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << dir << ": " << files.size() << " images in " << std::fixed << std::setprecision(2) << s << " s ("
            << files.size() / s << " images/s)\n";
  return f;
}

// The images of --fake and their classes (metrics::sample_folder: a class is its folder's
// number; hidden entries are skipped, and said), -n of them drawn as chosen_images draws them.
struct FakeImages {
  std::vector<std::string> files;
  torch::Tensor labels;  // undefined for a flat folder
};

FakeImages fake_images(const std::string& dir, int64_t n) {
  const metrics::SampleFolder f = metrics::sample_folder(dir);
  for (const auto& s : f.skipped) std::cerr << dir << ": skipped " << s << ": hidden, not samples\n";
  const auto count = static_cast<int64_t>(f.files.size());
  if (n > count) fail("-n ", n, ": ", dir, " holds only ", count, " images");
  // Statistics need a covariance: said now, not after the reference's features are extracted.
  if (n == 1 || count < 2)
    fail("--fake ", dir, ": ", n == 1 ? "-n 1 chooses 1 image" : "holds " + std::to_string(count) + " image(s)",
         "; expected at least 2 to score (FID needs a covariance)");
  const int64_t* label = f.labels.defined() ? f.labels.data_ptr<int64_t>() : nullptr;
  const Subset s = choose_subset(
      count, [&](int64_t i) { return label ? static_cast<int32_t>(label[i]) : Dataset::kLabelUnknown; }, n, 0);
  if (n > 0 && n < count) std::cerr << dir << ": " << s.description << "\n";
  FakeImages out;
  for (const int64_t i : s.indices) out.files.push_back(f.files[static_cast<size_t>(i)]);
  if (label) out.labels = f.labels.index_select(0, torch::tensor(s.indices, torch::kLong));
  return out;
}

metrics::Features fake_features(const std::string& dir, const FakeImages& fake, const metrics::FeatureNet& net,
                                const EvalSettings& j, bool want_logits) {
  const auto t0 = std::chrono::steady_clock::now();
  metrics::Features f = metrics::extract_features(
      net, metrics::image_batches(fake.files, net, j.batch, static_cast<int>(j.workers)), want_logits);
  f.labels = fake.labels;
  const double s = seconds_since(t0);
  std::cerr << dir << ": " << fake.files.size() << " images in " << std::fixed << std::setprecision(2) << s << " s ("
            << fake.files.size() / s << " images/s)\n" << std::defaultfloat;
  return f;
}

}  // namespace

ReferenceOptions reference_options(const EvalSettings& j, int64_t n, const Config* cfg, const metrics::FeatureNet& net) {
  ReferenceOptions o;
  o.format = j.format;
  o.n = n;
  const auto* clf = dynamic_cast<const metrics::ClassifierExtractor*>(&net);
  o.resolution = j.resolution ? *j.resolution
                 : clf                 ? clf->info().options.resolution
                 : cfg                 ? cfg->model.resolution
                                       : 32;
  o.channels = j.channels;
  if (o.channels == 0 && clf) o.channels = clf->info().options.channels;
  o.batch = j.batch;
  o.workers = static_cast<int>(j.workers);
  return o;
}

namespace {

// The classification accuracy score of the checkpoint's samples, tested on the real data's test
// split (or, for a source without one, on all of it), next to a real-trained classifier's: the
// registry's cas (metrics/registry.cpp), which only a checkpoint's samples can give.
std::function<metrics::MetricValue()> cas_of(const EvalSettings& j, const CheckpointData& ck, const sample::Sampler& s,
                                             int64_t n, const metrics::FeatureNet& net) {
  return [&j, &ck, &s, n, &net] {
    DataConfig dc;
    dc.path = j.real;
    dc.format = resolve_format(j.format, j.real);
    const int64_t res = ck.config.model.resolution, ch = ck.config.model.image_channels;
    std::shared_ptr<Dataset> test = open_test_split(dc, res, ch);
    const std::string split = test ? "test split" : "images";
    if (!test) test = open_dataset(dc, res, ch);
    ClassifierTrainOptions opt;
    opt.workers = static_cast<int>(j.workers);
    const CasResult c = classification_accuracy_score(s, n, test, opt, std::cerr);
    metrics::MetricValue v;
    v.value = c.accuracy;
    std::ostringstream o;
    o << std::setprecision(4) << c.accuracy << " (a classifier trained on " << c.n_train << " samples, tested on the "
      << c.n_test << " real " << split << " of " << j.real << ")";
    v.shown = o.str();
    std::ostringstream real;
    if (const auto* clf = dynamic_cast<const metrics::ClassifierExtractor*>(&net))
      real << "cas of a classifier trained on real images: " << clf->info().test_accuracy
           << " (the --features classifier, " << clf->info().data << ")";
    else
      real << "cas of a classifier trained on real images: see `hamgan classifier train --data " << j.real << "`";
    v.notes.push_back(real.str());
    return v;
  };
}

// -n of a form that draws samples, before anything is read: at most kMaxFidSamples.
void check_sample_count(const EvalSettings& j) {
  if (j.n > kMaxFidSamples)
    fail("-n ", j.n, ": expected 2..", kMaxFidSamples, " samples (0: eval.fid_n of the config)");
}

// The samples drawn: -n, else eval.fid_n of the checkpoint's config.
int64_t sample_count(const EvalSettings& j, const Config& stored) {
  const int64_t n = j.n > 0 ? j.n : stored.eval.fid_n;
  if (n < 2) fail("-n ", n, ": expected at least 2 samples for a covariance");
  return n;
}

// The reference that `n` samples are scored against: --real-n real images, else as many as the
// samples (or all, if fewer), read as the checkpoint's GAN reads them.
Reference samples_reference(const EvalSettings& j, int64_t n, const Config& stored, const metrics::FeatureNet& net) {
  const auto t0 = std::chrono::steady_clock::now();
  ReferenceOptions o = reference_options(j, j.real_n, &stored, net);
  if (o.n == 0) o.n = n, o.at_most = true;
  Reference ref = load_reference(j.real, o, net);
  if (ref.pool.defined())
    std::cerr << j.real << ": " << ref.pool.size(0) << " real images in " << std::fixed << std::setprecision(2)
              << seconds_since(t0) << " s\n" << std::defaultfloat;
  return ref;
}

// ScoreCheckpoint: samples drawn on the fly, scored and printed; no file written.
void score_checkpoint(const EvalSettings& j, const ScoreCheckpoint& form) {
  check_sample_count(j);
  const CheckpointData ck = load_checkpoint(form.path, j.sampler.device);
  const auto net = make_feature_net(j, &ck.config);
  const int64_t n = sample_count(j, ck.config);
  const Reference ref = samples_reference(j, n, ck.config, *net);
  const sample::Sampler s(ck, j.sampler, std::cerr);
  const Score sc = score_samples(s, n, *net, ref, j.metrics, j.quantize,
                                 j.metrics.any_needs(metrics::kSamples) ? cas_of(j, ck, s, n, *net) : nullptr);
  std::cerr << ck.path << ": " << sc.n << " samples drawn and through the feature network in " << std::fixed
            << std::setprecision(2) << sc.sample_seconds << " s (" << sc.n / sc.sample_seconds
            << " images/s); scored in " << sc.seconds << " s\n" << std::defaultfloat;
  std::cout << std::setprecision(6);
  print_score(sc, std::cout);
}

// A run scored before it had real_scores.csv gets its row, at the table's count and for the
// table's metrics, when the reference source has a test split.
void add_real_scores(const EvalSettings& j, const std::string& dir, const metrics::FeatureNet& net) {
  const std::vector<ScoreRow> rows = read_run_scores(dir);
  // Before a checkpoint is read: a run that has its row is only replotted.
  if (rows.empty() || is_npz(j.real) || real_scores_of(dir, net.identity(), rows.back().n)) return;
  std::ostringstream ignored;  // only its config is read
  const std::optional<CheckpointData> ck = load_latest_checkpoint(dir + "/checkpoints", ignored, j.sampler.device);
  if (!ck) return;
  MetricSet m;
  for (const auto& [name, v] : rows.back().values)
    if (std::isfinite(v)) m.add(name);
  const int64_t n = rows.back().n;
  ensure_real_scores(dir, j.real, reference_options(j, n, &ck->config, net), n,
                     [&] { return samples_reference(j, n, ck->config, net); }, net, m, std::cerr);
}

// ScoreRun: every checkpoint of the run without a row, into scores.csv and scores.png.
void score_run_checkpoints(const EvalSettings& j, const ScoreRun& form) {
  const std::string& dir = form.dir;
  check_sample_count(j);
  const bool all_scored = unscored_checkpoints(dir).empty();
  if (run_checkpoints(dir).empty()) fail("--run ", dir, ": no checkpoints in its checkpoints/ directory");
  if (all_scored) {  // no samples to draw: a domain classifier only to check the table's network
    if (!j.features.empty()) {
      const auto net = make_feature_net(j);
      check_run_net(dir, net->identity());
      add_real_scores(j, dir, *net);
    }
    ScoreEvents(dir).add_missing(read_run_scores(dir), warn_on(std::cerr));  // what TensorBoard's view lacks
    plot_run(dir);
    std::cout << "scored 0 checkpoints; every checkpoint already has a row in " << run_score_table(dir) << "\n";
    return;
  }
  io::check_output_path(scores_png(dir), io::png_output());  // before the reference's minutes
  // The config (Inception weights, resolution, fid_n) of the newest checkpoint that loads.
  std::ostringstream ignored;  // score_run reports each damaged one
  const std::optional<CheckpointData> ck = load_latest_checkpoint(dir + "/checkpoints", ignored, j.sampler.device);
  if (!ck) fail("--run ", dir, ": no checkpoint in checkpoints/ loads (all damaged)");
  const auto net = make_feature_net(j, &ck->config);
  RunScoreOptions ro;
  ro.run_dir = dir;
  ro.n = sample_count(j, ck->config);
  const Reference ref = samples_reference(j, ro.n, ck->config, *net);
  ro.sampler = j.sampler;
  ro.quantize = j.quantize;
  ro.metrics = j.metrics;
  for (const char* m : {"is", "kid"}) ro.metrics.add(m);  // a run's table always has IS (Inception) and KID where possible
  ro.metrics = possible_metrics(ro.metrics, metric_scope(EvalSpec{form, j}));
  // The data's own test images in the same features, drawn beside the samples in scores.png and
  // in TensorBoard's view.
  if (!is_npz(j.real))
    ensure_real_scores(dir, j.real, reference_options(j, ro.n, &ck->config, *net), ro.n, [&] { return ref; }, *net,
                       ro.metrics, std::cerr);
  ScoreEvents events(dir);  // the view gets the rows scored before that it lacks, then each new one
  events.add_missing(read_run_scores(dir), warn_on(std::cerr));
  std::vector<std::string> damaged;
  const auto rows = score_run(ro, ref, *net, std::cerr, &damaged, &events);
  std::cout << "scored " << rows.size() << " checkpoints; " << scores_csv(dir) << ", " << scores_png(dir) << "\n";
  if (!damaged.empty()) {
    std::string list;
    for (const auto& d : damaged) list += "\n  " + d;
    fail("fid --run: ", damaged.size(), " damaged checkpoint(s) could not be scored (the others were):", list);
  }
}

// MakeReference: statistics of an image directory or data source into an .npz.
void make_reference(const EvalSettings& j, const MakeReference& m) {
  // Before any feature is extracted: a refused --out costs nothing and nothing is written.
  if (!is_npz(m.out))
    fail("--out ", m.out, ": expected a file name ending in .npz (`hamgan fid --real` reads statistics by that name)");
  io::check_output_path(m.out, io::npz_output(), "--out");
  const bool images = m.from == MakeReference::From::ImageDir;
  const auto net = make_feature_net(j);
  const bool domain = net->n_classes() > 0;
  metrics::Features f;
  std::string described;  // which images: stored with the statistics
  if (images) {
    f = features_of(m.source, *net, j, domain, &described);
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    f = data_features(m.source, reference_options(j, j.n, nullptr, *net), *net, domain, &described);
    const double s = seconds_since(t0);
    std::cerr << m.source << ": " << f.pool.size(0) << " images in " << std::fixed << std::setprecision(2) << s
              << " s (" << f.pool.size(0) / s << " images/s)\n";
  }
  metrics::GaussianStats st = metrics::compute_stats(f.pool);
  st.net = net->identity();
  st.images = described;
  metrics::save_stats(m.out, st);
  std::cout << "wrote " << m.out << " (" << f.pool.size(0) << " images, " << metrics::describe_feature_net(st.net)
            << ")\n";
  // The statistics are the result; class accuracy of the real images only informs (a folder
  // with classes the classifier does not know still gets its statistics).
  try {
    report_class_accuracy(f, *net, m.source);
  } catch (const Error& e) {
    std::cout << "class accuracy: none (" << e.what() << ")\n";
  }
}

// ScoreFolder: the images of `dir` against the reference.
void score_folder(const EvalSettings& j, const ScoreFolder& form) {
  const std::string& dir = form.dir;
  // Which fakes (a stray folder, too few images), then the reference: cheap failures come before
  // minutes of feature extraction.
  const FakeImages images = fake_images(dir, j.n);
  const auto net = make_feature_net(j);
  const Reference ref = load_reference(j.real, reference_options(j, j.n, nullptr, *net), *net);
  const metrics::Features fake = fake_features(dir, images, *net, j, wants_logits(*net, j.metrics));
  const Score sc = score_features(fake, ref, *net, j.metrics);
  std::cout << std::setprecision(6);
  print_score(sc, std::cout);
  if (net->n_classes() > 0 && !fake.labels.defined())
    std::cout << "class_acc: none (" << dir << " has no class subdirectories)\n";
}

// ScoreTestSplit: the source's test images scored as score_checkpoint scores n samples (the
// same count, the same training images as reference), so that its figures stand beside a
// checkpoint's.
void score_test_split(const EvalSettings& j) {
  if (j.n == 1) fail(j.keys.n, " 1: expected at least 2 test images to score (FID needs a covariance)");
  const auto net = make_feature_net(j);
  ReferenceOptions o = reference_options(j, j.n, nullptr, *net);
  const auto t0 = std::chrono::steady_clock::now();
  const std::optional<metrics::Features> test = test_split_features(j.real, o, *net, wants_logits(*net, j.metrics));
  if (!test)
    fail("--test-split: ", j.keys.real, " ", j.real, " has no test split; expected Fashion-MNIST's directory with its "
         "t10k-images/labels files, or CIFAR-10's with test_batch.bin");
  std::cerr << j.real << " (test split): " << test->pool.size(0) << " images in " << std::fixed << std::setprecision(2)
            << seconds_since(t0) << " s\n" << std::defaultfloat;
  o.n = j.real_n > 0 ? j.real_n : test->pool.size(0), o.at_most = j.real_n == 0;
  const Reference ref = load_reference(j.real, o, *net);
  const Score sc = score_features(*test, ref, *net, j.metrics);
  std::cout << std::setprecision(6);
  print_score(sc, std::cout);
}

}  // namespace

namespace {

template <class>
constexpr bool kNoRunner = false;

// The settings a scoring form runs with: --all resolved to the metrics that can be computed
// here (no IS from a classifier, no KID from an .npz, no ifid without classes).
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

}  // namespace

void evaluate(const EvalSpec& spec) {
  check_request(spec);
  std::visit(
      [&spec](const auto& form) {
        using F = std::decay_t<decltype(form)>;
        if constexpr (std::is_same_v<F, MakeReference>) make_reference(spec.settings, form);
        else if constexpr (std::is_same_v<F, ScoreCheckpoint>) score_checkpoint(scoring_settings(spec), form);
        else if constexpr (std::is_same_v<F, ScoreRun>) score_run_checkpoints(scoring_settings(spec), form);
        else if constexpr (std::is_same_v<F, ScoreFolder>) score_folder(scoring_settings(spec), form);
        else if constexpr (std::is_same_v<F, ScoreTestSplit>) score_test_split(scoring_settings(spec));
        else static_assert(kNoRunner<F>, "an evaluation form that evaluate() does not run");
      },
      spec.form);
}

}  // namespace hamgan::eval
