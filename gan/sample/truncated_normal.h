// Latent draws for sampling. The truncation trick (Brock et al. 2019, BigGAN Sec. 3.1): draw
// z ~ N(0, I) and redraw every entry with |z| > T until all lie in [-T, T], i.e. z follows the
// standard normal truncated to [-T, T]. T = 0 means no truncation.
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace hamgan::sample {

// Smallest truncation accepted: each redraw pass keeps P(|z| <= T) ~ 0.8 T of the entries,
// so the number of passes grows like 1/T; below this the loop would run for minutes (1e-9:
// forever), and BigGAN's sweeps stop at 0.04 anyway.
constexpr double kMinTruncation = 0.01;
// Fails naming --truncation unless T is 0 (none) or in [kMinTruncation, inf).
void check_truncation(double truncation);

// `n` float32 values from N(0, 1) truncated to [-T, T] (plain N(0, 1) when T == 0), drawn
// from `gen` (a CPU generator), so the result depends only on the generator's state.
torch::Tensor truncated_normal(int64_t n, double truncation, at::Generator gen);

// The latent of image `k` of class `cls`: a CPU generator seeded from splitmix64 of
// (seed, cls, k), so every image's z is the same whatever the batch size, the other
// classes sampled or the device. [z_dim] float32 on the CPU.
torch::Tensor latent_for(uint64_t seed, int64_t cls, int64_t k, int64_t z_dim, double truncation);

}  // namespace hamgan::sample
