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
  std::string net;  // the feature network's identity (FeatureNet::identity; "" = Inception)
  std::string images;  // which images (e.g. "300 of 1500 images, class-balanced ..."); "" = not recorded
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

// pytorch-fid's .npz format: keys `mu` and `sigma`, plus `feature_net` (the identity's
// character codes as float64) for statistics of a network other than Inception; validated (validate_stats).
GaussianStats load_stats(const std::string& path);
// Fails naming `what` unless mu and sigma are finite and sigma is symmetric positive
// semi-definite (a covariance): a broken reference must not yield a plausible FID.
void validate_stats(const GaussianStats& s, const std::string& what);
void save_stats(const std::string& path, const GaussianStats& s);
// Statistics of `s` (from `what`) can be compared with features of network `net`: else an
// error naming both networks.
void check_same_net(const GaussianStats& s, const std::string& net, const std::string& what);

}  // namespace hamgan::metrics
