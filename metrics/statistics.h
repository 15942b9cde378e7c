// Running mean and covariance of feature vectors in float64 (covariance with N - 1, as
// np.cov in pytorch-fid). Batches merge with Chan et al.'s pairwise update, so no raw second
// moment is ever formed (no cancellation) and features need not be kept.
#pragma once
#include <torch/torch.h>

#include <string>

namespace hamgan::metrics {

struct GaussianStats {
  torch::Tensor mu;     // [d] float64
  torch::Tensor sigma;  // [d, d] float64
  int64_t n = 0;
};

class StatsAccumulator {
 public:
  void add(const torch::Tensor& features);  // [B, d], any float dtype and device
  int64_t count() const { return n_; }
  GaussianStats finish() const;  // needs at least 2 samples

 private:
  torch::Tensor mean_, m2_;  // float64 on CPU
  int64_t n_ = 0;
};

GaussianStats compute_stats(const torch::Tensor& features);  // [N, d]

// pytorch-fid's .npz format: keys `mu` and `sigma`, validated (validate_stats).
GaussianStats load_stats(const std::string& path);
// Fails naming `what` unless mu and sigma are finite and sigma is symmetric positive
// semi-definite (a covariance): a broken reference must not yield a plausible FID.
void validate_stats(const GaussianStats& s, const std::string& what);
void save_stats(const std::string& path, const GaussianStats& s);

}  // namespace hamgan::metrics
