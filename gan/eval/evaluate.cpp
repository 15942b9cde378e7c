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
#include "gan/eval/run_scorer.h"
#include "gan/eval/score.h"
#include "gan/eval/score_run.h"
#include "gan/eval/score_table.h"
#include "gan/sample/plan.h"
#include "io/decode.h"
#include "io/dir_lock.h"
#include "io/output_path.h"
#include "metrics/class_accuracy.h"
#include "metrics/classifier.h"
#include "metrics/feature_nets.h"
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

// ScoreRun: every checkpoint of the run without a row, into scores.csv and scores.png.
void score_run_checkpoints(const EvalSpec& spec) {
  const EvalSettings& j = spec.settings;
  const std::string& dir = std::get<ScoreRun>(spec.form).dir;
  check_sample_count(j);
  if (run_checkpoints(dir).empty()) fail("--run ", dir, ": no checkpoints in its checkpoints/ directory");
  if (unscored_checkpoints(dir).empty()) {  // no samples to draw: the table's network and count checked
    const io::DirLock lock(dir, ".fid.lock");  // one scorer adds the view's missing rows, not each
    if (!j.features.empty()) check_run_net(dir, make_feature_net(j)->identity());
    if (j.n > 0) check_run_n(dir, j.n, j.keys.n);
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
  RunScorer scorer(spec, ck->config);
  // The data's own test images in the same features, drawn beside the samples in scores.png and
  // in TensorBoard's view.
  scorer.ensure_real_scores(std::cerr);
  std::vector<std::string> damaged;
  const auto rows = scorer.score_unscored(std::cerr, &damaged);
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

template <class>
constexpr bool kNoRunner = false;

}  // namespace

void evaluate(const EvalSpec& spec) {
  check_request(spec);
  std::visit(
      [&spec](const auto& form) {
        using F = std::decay_t<decltype(form)>;
        if constexpr (std::is_same_v<F, MakeReference>) make_reference(spec.settings, form);
        else if constexpr (std::is_same_v<F, ScoreCheckpoint>) score_checkpoint(scoring_settings(spec), form);
        else if constexpr (std::is_same_v<F, ScoreRun>) score_run_checkpoints(EvalSpec{form, scoring_settings(spec)});
        else if constexpr (std::is_same_v<F, ScoreFolder>) score_folder(scoring_settings(spec), form);
        else if constexpr (std::is_same_v<F, ScoreTestSplit>) score_test_split(scoring_settings(spec));
        else static_assert(kNoRunner<F>, "an evaluation form that evaluate() does not run");
      },
      spec.form);
}

}  // namespace hamgan::eval
