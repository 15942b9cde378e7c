#include "gan/eval/fid_job.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/config.h"
#include "gan/data/sources.h"
#include "gan/data/test_split.h"
#include "gan/eval/cas.h"
#include "gan/eval/reference.h"
#include "gan/eval/score.h"
#include "gan/eval/score_run.h"
#include "gan/sample/plan.h"
#include "io/decode.h"
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

// Negative counts are errors, not "use the default" (issue 13).
}  // namespace

void check_fid_job(const FidJob& j) {
  if (j.n < 0) fail("-n ", j.n, ": expected >= 0 (0: all, or the config's eval.fid_n)");
  if (j.batch < 1) fail("--batch ", j.batch, ": expected >= 1");
  if (j.workers < 1 || j.workers > 256) fail("--workers: expected 1..256, got ", j.workers);
}

// --features, else Inception: --inception > $HAMGAN_INCEPTION > eval.inception of -c (else of
// `stored`, a checkpoint's config).
std::unique_ptr<metrics::FeatureNet> make_feature_net(const FidJob& j, const Config* stored) {
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
  if (!j.config.empty()) cfg_path = load_config(j.config).eval.inception;
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
    std::cout << "class accuracy: none (" << what << " has no class subdirectories)\n";
    return std::nan("");
  }
  const auto a = metrics::class_accuracy(f.logits, f.labels, what);
  std::cout << "class accuracy " << metrics::format_class_accuracy(a) << "\n";
  return a.overall;
}

metrics::Features features_of(const std::string& dir, const metrics::FeatureNet& net, const FidJob& j,
                              bool want_logits, std::string* described = nullptr) {
  const auto files = chosen_images(dir, j.n, /*at_most=*/false, /*seed=*/0, described);
  const auto t0 = std::chrono::steady_clock::now();
  metrics::Features f = metrics::extract_features(
      net, metrics::image_batches(files, net, j.batch, j.workers), want_logits);
  f.labels = folder_labels(dir, files);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << dir << ": " << files.size() << " images in " << std::fixed << std::setprecision(2) << s << " s ("
            << files.size() / s << " images/s)\n";
  return f;
}

}  // namespace

ReferenceOptions reference_options(const FidJob& j, int64_t n, const Config* cfg, const metrics::FeatureNet& net) {
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
  o.workers = j.workers;
  return o;
}

namespace {

// The classification accuracy score of the checkpoint's samples, tested on the real data's test
// split (or, for a source without one, on all of it), next to a real-trained classifier's.
void print_cas(const FidJob& j, const CheckpointData& ck, const sample::Sampler& s, int64_t n,
               const metrics::FeatureNet& net) {
  DataConfig dc;
  dc.path = j.real;
  dc.format = resolve_format(j.format, j.real);
  const int64_t res = ck.config.model.resolution, ch = ck.config.model.image_channels;
  std::shared_ptr<Dataset> test = open_test_split(dc, res, ch);
  const std::string split = test ? "test split" : "images";
  if (!test) test = open_dataset(dc, res, ch);
  ClassifierTrainOptions opt;
  opt.workers = j.workers;
  const CasResult c = classification_accuracy_score(s, n, test, opt, std::cerr);
  std::cout << "classification accuracy score " << std::setprecision(4) << c.accuracy << " (a classifier trained on "
            << c.n_train << " samples, tested on the " << c.n_test << " real " << split << " of " << j.real << ")\n";
  if (const auto* clf = dynamic_cast<const metrics::ClassifierExtractor*>(&net))
    std::cout << "trained on real images: " << clf->info().test_accuracy << " (the --features classifier, "
              << clf->info().data << ")\n";
  else
    std::cout << "trained on real images: see `hamgan classifier train --data " << j.real << "`\n";
}

// --checkpoint (one score, printed) or --run (every unscored checkpoint, into fid.csv/fid.png).
void fid_of_samples(const FidJob& j) {
  const bool run = !j.run.empty();
  if (j.n > kMaxFidSamples)
    fail("-n ", j.n, ": expected 2..", kMaxFidSamples, " samples (0: eval.fid_n of the config)");
  if (j.real_n < 0) fail("--real-n ", j.real_n, ": expected >= 0");
  if (run && unscored_checkpoints(j.run).empty()) {  // no need for the net
    if (run_checkpoints(j.run).empty()) fail("--run ", j.run, ": no checkpoints in its checkpoints/ directory");
    if (!j.features.empty()) check_run_net(j.run, make_feature_net(j)->identity());
    plot_run(j.run);
    std::cout << "scored 0 checkpoints; every checkpoint already has a row in " << j.run << "/fid.csv\n";
    return;
  }
  // The config (Inception weights, resolution, fid_n) of the newest checkpoint that loads.
  std::optional<CheckpointData> loaded;
  if (run) {
    if (run_checkpoints(j.run).empty()) fail("--run ", j.run, ": no checkpoints in its checkpoints/ directory");
    std::ostringstream ignored;  // score_run reports each damaged one
    loaded = load_latest_checkpoint(j.run + "/checkpoints", ignored, j.sampler.device);
    if (!loaded) fail("--run ", j.run, ": no checkpoint in checkpoints/ loads (all damaged)");
  } else {
    loaded = load_checkpoint(j.checkpoint, j.sampler.device);
  }
  const CheckpointData& ck = *loaded;
  const auto net = make_feature_net(j, &ck.config);
  const int64_t n = j.n > 0 ? j.n : ck.config.eval.fid_n;
  if (n < 2) fail("-n ", n, ": expected at least 2 samples for a covariance");
  const auto t0 = std::chrono::steady_clock::now();
  ReferenceOptions real_opt = reference_options(j, j.real_n, &ck.config, *net);
  if (real_opt.n == 0) real_opt.n = n, real_opt.at_most = true;  // as many real images as samples, or all if fewer
  const Reference ref = load_reference(j.real, real_opt, *net);
  if (ref.pool.defined())
    std::cerr << j.real << ": " << ref.pool.size(0) << " real images in " << std::fixed << std::setprecision(2)
              << seconds_since(t0) << " s\n" << std::defaultfloat;
  if (run) {
    RunScoreOptions ro;
    ro.run_dir = j.run;
    ro.n = n;
    ro.sampler = j.sampler;
    ro.quantize = j.quantize;
    ro.metrics = j.metrics;
    ro.metrics.is = ro.metrics.kid = true;  // a run's table always has IS (Inception) and KID where possible
    if (ro.metrics.cas) std::cerr << "note: cas (a classifier trained per checkpoint) is for --checkpoint; not in fid.csv\n";
    std::vector<std::string> damaged;
    const auto rows = score_run(ro, ref, *net, std::cerr, &damaged);
    std::cout << "scored " << rows.size() << " checkpoints; " << ro.run_dir << "/fid.csv, " << ro.run_dir
              << "/fid.png\n";
    if (!damaged.empty()) {
      std::string list;
      for (const auto& d : damaged) list += "\n  " + d;
      fail("fid --run: ", damaged.size(), " damaged checkpoint(s) could not be scored (the others were):", list);
    }
    return;
  }
  const sample::Sampler s(ck, j.sampler, std::cerr);
  const Score sc = score_samples(s, n, *net, ref, j.metrics, j.quantize);
  std::cerr << ck.path << ": " << sc.n << " samples drawn and through the feature network in " << std::fixed
            << std::setprecision(2) << sc.sample_seconds << " s (" << sc.n / sc.sample_seconds
            << " images/s); scored in " << sc.seconds << " s\n" << std::defaultfloat;
  std::cout << std::setprecision(6);
  print_score(sc, j.metrics, std::cout);
  if (net->n_classes() > 0) std::cout << "class accuracy " << metrics::format_class_accuracy(sc.class_acc) << "\n";
  if (j.metrics.cas) print_cas(j, ck, s, n, *net);
}

}  // namespace

void fid_stats(const FidJob& j) {
  if (j.images.empty() == j.data.empty() || j.out.empty())
    fail("fid stats: one of --images DIR or --data SRC, and --out FILE.npz, are required");
  check_fid_job(j);
  const auto net = make_feature_net(j);
  const bool domain = net->n_classes() > 0;
  metrics::Features f;
  std::string described;  // which images: stored with the statistics (issue 25)
  if (!j.images.empty()) {
    f = features_of(j.images, *net, j, domain, &described);
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    f = data_features(j.data, reference_options(j, j.n, nullptr, *net), *net, domain, &described);
    const double s = seconds_since(t0);
    std::cerr << j.data << ": " << f.pool.size(0) << " images in " << std::fixed << std::setprecision(2) << s
              << " s (" << f.pool.size(0) / s << " images/s)\n";
  }
  metrics::GaussianStats st = metrics::compute_stats(f.pool);
  st.net = net->identity();
  st.images = described;
  metrics::save_stats(j.out, st);
  std::cout << "wrote " << j.out << " (" << f.pool.size(0) << " images, " << metrics::describe_feature_net(st.net)
            << ")\n";
  // The statistics are the result; class accuracy of the real images only informs (a folder
  // with classes the classifier does not know still gets its statistics, issue 25).
  try {
    report_class_accuracy(f, *net, !j.images.empty() ? j.images : j.data);
  } catch (const Error& e) {
    std::cout << "class accuracy: none (" << e.what() << ")\n";
  }
}

void fid_score(const FidJob& j) {
  if (j.real.empty() || int(!j.fake.empty()) + int(!j.checkpoint.empty()) + int(!j.run.empty()) != 1)
    fail("fid: --real (ref.npz, DIR or data source) and one of --fake DIR, --checkpoint CK or --run DIR are required");
  check_fid_job(j);
  if (j.fake.empty()) return fid_of_samples(j);
  const auto net = make_feature_net(j);
  // The reference first: a broken .npz fails before minutes of feature extraction.
  const Reference ref = load_reference(j.real, reference_options(j, j.n, nullptr, *net), *net);
  const metrics::Features fake = features_of(j.fake, *net, j, wants_logits(*net, j.metrics));
  const Score sc = score_features(fake, ref, *net, j.metrics);
  std::cout << std::setprecision(6);
  print_score(sc, j.metrics, std::cout);
  report_class_accuracy(fake, *net, j.fake);
}

}  // namespace hamgan::eval
