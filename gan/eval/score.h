// The scores of one set of fake images against a reference, in one feature network: FID, and
// as asked (gan/eval/metric_set.h) IS, KID, precision/recall, density/coverage and intra-class
// FID; with a domain classifier also the class accuracy under the images' classes. Fakes are
// a checkpoint's samples drawn on the fly (n split evenly over the classes, latents from the
// sampler's seed, no files written) or an image directory's features (`fid --fake`).
#pragma once
#include <string>
#include <vector>

#include "gan/eval/metric_set.h"
#include "gan/eval/reference.h"
#include "gan/sample/sampler.h"
#include "metrics/class_accuracy.h"
#include "metrics/feature_net.h"

namespace hamgan::eval {

struct Score {
  double fid = 0;
  double is = 0, is_std = 0;    // NaN unless computed
  double kid = 0, kid_std = 0;  // NaN unless computed (needs real features)
  metrics::ClassAccuracy class_acc;  // overall NaN unless the net is a classifier
  double precision = 0, recall = 0, density = 0, coverage = 0;  // NaN unless computed
  double ifid = 0;                       // mean intra-class FID; NaN unless computed
  std::vector<double> ifid_per_class;    // NaN where a class has < 2 images on a side
  std::vector<std::string> notes;        // why an asked metric is missing or unreliable
  std::vector<std::string> warnings;     // numbers computed but not meaning what they seem (duplicates)
  int64_t n = 0;
  double seconds = 0;          // everything (the 2048-d Frechet distance alone takes seconds)
  double sample_seconds = 0;   // sampling + features only
};

// Every metric of `m` for `fake` (logits when IS or class accuracy needs them; labels: the
// images' classes, undefined when unknown).
Score score_features(const metrics::Features& fake, const Reference& ref, const metrics::FeatureNet& net,
                     const MetricSet& m);
// quantize: score the 8-bit images `hamgan sample` would write (sample/sample_batches.h).
Score score_samples(const sample::Sampler& s, int64_t n, const metrics::FeatureNet& net, const Reference& ref,
                    const MetricSet& m, bool quantize = true);
// Whether the feature extraction must keep logits for `m` with `net`.
bool wants_logits(const metrics::FeatureNet& net, const MetricSet& m);
// The asked metrics, one per line ("FID 12.3", "precision 0.71 recall 0.52", ...), then
// warnings and notes.
void print_score(const Score& s, const MetricSet& m, std::ostream& out);

}  // namespace hamgan::eval
