// FID (and IS, KID) of a checkpoint's samples in one pass, without writing images:
// n samples split evenly over all classes (latents from the sampler's seed), fed to the
// feature network batch by batch. With a domain classifier (FeatureNet::n_classes() > 0)
// also the class accuracy of the samples under their conditioning class (no IS).
#pragma once
#include <vector>

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
  int64_t n = 0;
  double seconds = 0;          // everything (the 2048-d Frechet distance alone takes seconds)
  double sample_seconds = 0;   // sampling + features only
};

// all: also IS (min(10, n) splits) and KID (when ref has features). quantize: score the
// 8-bit images `hamgan sample` would write (sample/sample_batches.h).
Score score_samples(const sample::Sampler& s, int64_t n, const metrics::FeatureNet& net,
                    const Reference& ref, bool all, bool quantize = true);

}  // namespace hamgan::eval
