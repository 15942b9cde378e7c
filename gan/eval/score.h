// The scores of one set of fake images against a reference, in one feature network: every
// metric of the registry (metrics/metric.h) that was asked for or is automatic (FID; class
// accuracy with a domain classifier) and can be computed from what is there. Fakes are a
// checkpoint's samples drawn on the fly (n split evenly over the classes, latents from the
// sampler's seed, no files written) or an image directory's features (`fid --fake`).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "gan/eval/metric_set.h"
#include "gan/eval/reference.h"
#include "gan/sample/sampler.h"
#include "metrics/feature_net.h"

namespace hamgan::eval {

struct Score {
  std::map<std::string, metrics::MetricValue> values;  // by metric name; only those computed
  std::vector<std::string> notes;        // why an asked metric is missing or unreliable
  std::vector<std::string> warnings;     // numbers computed but not meaning what they seem (duplicates)
  int64_t n = 0;
  double seconds = 0;          // everything (the 2048-d Frechet distance alone takes seconds)
  double sample_seconds = 0;   // sampling + features only
  // The Frechet distance's name in these features: fid, or fd_dinov2 (metrics/feature_nets.h).
  std::string distance = "fid";
  // How metric `name` is printed: the distance's name for fid, else the name.
  std::string label(const std::string& name) const;
  // The value of metric `name`, NaN when not computed.
  double value(const std::string& name) const;
};

// Every metric of `m` for `fake` (logits when IS or class accuracy needs them; labels: the
// images' classes, undefined when unknown). `samples_classifier` computes the metrics that
// need fresh samples (gan/eval/cas.h), where there are some.
Score score_features(const metrics::Features& fake, const Reference& ref, const metrics::FeatureNet& net,
                     const MetricSet& m, std::function<metrics::MetricValue()> samples_classifier = {});
// quantize: score the 8-bit images `hamgan sample` would write (sample/sample_batches.h).
Score score_samples(const sample::Sampler& s, int64_t n, const metrics::FeatureNet& net, const Reference& ref,
                    const MetricSet& m, bool quantize = true,
                    std::function<metrics::MetricValue()> samples_classifier = {});
// Whether the feature extraction must keep logits for `m` with `net`.
bool wants_logits(const metrics::FeatureNet& net, const MetricSet& m);
// The computed metrics, one per line in registry order ("fid 12.3", "precision 0.71 (k 3)"),
// then warnings and notes.
void print_score(const Score& s, std::ostream& out);
// "fid 12.3, kid 0.01, precision 0.7": the computed metrics on one line.
std::string score_line(const Score& s);

}  // namespace hamgan::eval
