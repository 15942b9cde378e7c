#include "gan/sample/truncated_normal.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/error.h"
#include "core/splitmix.h"

namespace hamgan::sample {

void check_truncation(double truncation) {
  if (truncation == 0) return;
  if (!(truncation >= kMinTruncation))
    fail("--truncation ", truncation, ": expected 0 (no truncation) or a value >= ", kMinTruncation);
}

torch::Tensor truncated_normal(int64_t n, double truncation, at::Generator gen) {
  if (n < 0) fail("truncated normal: count ", n, ": expected >= 0");
  check_truncation(truncation);
  torch::Tensor z = at::normal(0.0, 1.0, {n}, gen);
  if (truncation == 0) return z;
  // Redraw only the rejected entries: each pass keeps P(|z| <= T) of them, so this ends fast
  // for any T that is not tiny (T = 0.01 still accepts 0.8% per pass).
  for (torch::Tensor bad = z.abs() > truncation; bad.any().item<bool>(); bad = z.abs() > truncation) {
    const int64_t m = bad.sum().item<int64_t>();
    z.masked_scatter_(bad, at::normal(0.0, 1.0, {m}, gen));
  }
  return z;
}

torch::Tensor latent_for(uint64_t seed, int64_t cls, int64_t k, int64_t z_dim, double truncation) {
  const uint64_t key = splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(cls)) ^ static_cast<uint64_t>(k));
  at::Generator gen = at::detail::createCPUGenerator(key);
  return truncated_normal(z_dim, truncation, gen);
}

}  // namespace hamgan::sample
