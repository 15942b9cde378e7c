#include "gan/eval/score_inputs.h"

#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>

#include "core/error.h"
#include "metrics/classifier.h"
#include "metrics/feature_nets.h"
#include "metrics/inception.h"

namespace hamgan::eval {

// --features, else Inception: --inception > $HAMGAN_INCEPTION > eval.inception of -c (else of
// `stored`, a checkpoint's config).
std::unique_ptr<metrics::FeatureNet> make_feature_net(const EvalSettings& j, const Config* stored) {
  const torch::Device dev = j.device;
  if (!j.features.empty()) {
    if (!j.inception.empty()) fail("--features and --inception: choose one feature network");
    return metrics::open_feature_net(j.features, {dev, metrics::parse_resize(j.resize), j.channels_last}, j.keys.features);
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

ReferenceOptions reference_options(const EvalSettings& j, int64_t n, const Config* cfg, const metrics::FeatureNet& net) {
  ReferenceOptions o;
  o.format = j.format;
  o.n = n;
  o.n_key = j.keys.n;
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

void check_sample_count(const EvalSettings& j) {
  if (j.n > kMaxFidSamples)
    fail("-n ", j.n, ": expected 2..", kMaxFidSamples, " samples (0: eval.fid_n of the config)");
}

int64_t sample_count(const EvalSettings& j, const Config& stored) {
  const int64_t n = j.n > 0 ? j.n : stored.eval.fid_n;
  if (n < 2) fail("-n ", n, ": expected at least 2 samples for a covariance");
  return n;
}

Reference samples_reference(const EvalSettings& j, int64_t n, const Config& stored, const metrics::FeatureNet& net,
                            ReferenceOptions* used) {
  const auto t0 = std::chrono::steady_clock::now();
  ReferenceOptions o = reference_options(j, j.real_n, &stored, net);
  o.n_key = j.keys.real_n;
  if (o.n == 0) o.n = n, o.at_most = true, o.n_key = j.keys.n;
  if (o.channels == 0) o.channels = stored.model.image_channels;  // a data source read as the GAN's images
  if (used) *used = o;
  Reference ref = load_reference(j.real, o, net);
  if (ref.pool.defined())
    std::cerr << j.real << ": " << ref.pool.size(0) << " real images in " << std::fixed << std::setprecision(2)
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n" << std::defaultfloat;
  return ref;
}

}  // namespace hamgan::eval
