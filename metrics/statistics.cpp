#include "metrics/statistics.h"

#include "core/error.h"
#include "io/npz.h"

namespace hamgan::metrics {

void StatsAccumulator::add(const torch::Tensor& features) {
  if (features.dim() != 2) fail("statistics: features of shape ", features.sizes(), ", expected [B, d]");
  const torch::Tensor x = features.detach().to(torch::kCPU, torch::kDouble);
  const int64_t b = x.size(0);
  if (b == 0) return;
  if (n_ && x.size(1) != mean_.size(0))
    fail("statistics: features of width ", x.size(1), ", earlier batches had ", mean_.size(0));
  const torch::Tensor mb = x.mean(0);
  const torch::Tensor xc = x - mb;
  const torch::Tensor m2b = xc.t().mm(xc);
  if (!n_) {
    mean_ = mb, m2_ = m2b, n_ = b;
    return;
  }
  const double n = static_cast<double>(n_), nb = static_cast<double>(b), tot = n + nb;
  const torch::Tensor delta = mb - mean_;
  m2_ = m2_ + m2b + torch::outer(delta, delta) * (n * nb / tot);
  mean_ = mean_ + delta * (nb / tot);
  n_ += b;
}

GaussianStats StatsAccumulator::finish() const {
  if (n_ < 2) fail("statistics: need at least 2 samples for a covariance, got ", n_);
  return {mean_.clone(), m2_ / static_cast<double>(n_ - 1), n_};
}

GaussianStats compute_stats(const torch::Tensor& features) {
  StatsAccumulator acc;
  acc.add(features);
  return acc.finish();
}

GaussianStats load_stats(const std::string& path) {
  const auto a = npz::read(path);
  for (const char* k : {"mu", "sigma"})
    if (!a.count(k)) fail(path, ": no array '", k, "' (pytorch-fid statistics need mu and sigma)");
  GaussianStats s{a.at("mu"), a.at("sigma"), 0};
  const int64_t d = s.mu.numel();
  if (s.mu.dim() != 1 || s.sigma.dim() != 2 || s.sigma.size(0) != d || s.sigma.size(1) != d)
    fail(path, ": mu of shape ", s.mu.sizes(), " and sigma of shape ", s.sigma.sizes(), ", expected [d] and [d, d]");
  return s;
}

void save_stats(const std::string& path, const GaussianStats& s) {
  npz::write(path, {{"mu", s.mu}, {"sigma", s.sigma}});
}

}  // namespace hamgan::metrics
