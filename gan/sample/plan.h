// What to sample: a list of (class, index within class). With per_class = K every selected
// class gets K images; otherwise n images are split over the classes as evenly as possible
// (the first n mod C classes get one more).
#pragma once
#include <cstdint>
#include <vector>

namespace hamgan::sample {

struct SampleItem {
  int64_t cls = 0;
  int64_t k = 0;  // index within the class: the file name and, with the seed, the latent
};

// Bounds on one command's sample count, checked before anything is allocated: `sample`
// writes each image as a file (10 million is far beyond any evaluation protocol; several
// runs with other --seed go further); `fid`'s is kMaxFidSamples of gan/config/config.h.
constexpr int64_t kMaxSamples = 10'000'000;

std::vector<SampleItem> make_plan(const std::vector<int64_t>& classes, int64_t n, int64_t per_class);
// n images split evenly over every class 0..n_classes-1: what a score draws.
std::vector<SampleItem> all_classes_plan(int64_t n_classes, int64_t n);

}  // namespace hamgan::sample
