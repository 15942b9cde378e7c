#include "metrics/statistics.h"

#include <Eigen/Dense>

#include <algorithm>

#include "core/error.h"
#include "io/npz.h"
#include "metrics/feature_net.h"

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
  return {mean_.clone(), m2_ / static_cast<double>(n_ - 1), n_, "", ""};
}

GaussianStats compute_stats(const torch::Tensor& features) {
  StatsAccumulator acc;
  acc.add(features);
  return acc.finish();
}

namespace {

// Text in an .npz: its character codes as float64 (numpy reads every array kind; text does not).
torch::Tensor codes_of(const std::string& text) {
  return torch::tensor(std::vector<double>(text.begin(), text.end()), torch::kDouble);
}

std::string text_of(const std::map<std::string, torch::Tensor>& a, const std::string& key, const std::string& path) {
  std::string out;
  if (!a.count(key)) return out;
  const torch::Tensor c = a.at(key).flatten().to(torch::kDouble).contiguous();
  const double* v = c.data_ptr<double>();
  for (int64_t i = 0; i < c.numel(); ++i) {
    if (!(v[i] >= 32 && v[i] < 127) || v[i] != static_cast<int>(v[i]))
      fail(path, ": '", key, "' is not text (character codes 32..126)");
    out += static_cast<char>(v[i]);
  }
  return out;
}

}  // namespace

GaussianStats load_stats(const std::string& path) {
  const auto a = npz::read(path);
  for (const char* k : {"mu", "sigma"})
    if (!a.count(k)) fail(path, ": no array '", k, "' (pytorch-fid statistics need mu and sigma)");
  GaussianStats s{a.at("mu"), a.at("sigma"), 0, "", ""};
  s.net = text_of(a, "feature_net", path);
  s.images = text_of(a, "images", path);
  const int64_t d = s.mu.numel();
  if (s.mu.dim() != 1 || s.sigma.dim() != 2 || s.sigma.size(0) != d || s.sigma.size(1) != d)
    fail(path, ": mu of shape ", s.mu.sizes(), " and sigma of shape ", s.sigma.sizes(), ", expected [d] and [d, d]");
  validate_stats(s, path);
  return s;
}

void validate_stats(const GaussianStats& s, const std::string& what) {
  if (!torch::isfinite(s.mu).all().item<bool>()) fail(what, ": mu holds NaN or infinite values");
  if (!torch::isfinite(s.sigma).all().item<bool>()) fail(what, ": sigma holds NaN or infinite values");
  const torch::Tensor sig = s.sigma.to(torch::kDouble);
  const double scale = std::max(sig.abs().max().item<double>(), 1e-300);
  const double asym = (sig - sig.t()).abs().max().item<double>();
  if (asym > 1e-6 * scale)
    fail(what, ": sigma is not symmetric (max |sigma - sigma^T| = ", asym, " for entries up to ", scale,
         "); expected a covariance matrix");
  // A covariance is positive semi-definite; eigenvalues below -1e-5 lambda_max are not rounding
  // (float32 storage of a float64 covariance stays far above that).
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> m(
      sig.contiguous().data_ptr<double>(), sig.size(0), sig.size(1));
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> e(Eigen::MatrixXd(m), Eigen::EigenvaluesOnly);
  if (e.info() != Eigen::Success) fail(what, ": eigen-decomposition of sigma failed");
  const double lo = e.eigenvalues().minCoeff(), hi = std::max(e.eigenvalues().maxCoeff(), 0.0);
  if (lo < -1e-5 * hi || (hi == 0 && lo < 0))
    fail(what, ": sigma is not positive semi-definite (smallest eigenvalue ", lo, ", largest ", hi,
         "); expected a covariance matrix");
}

void save_stats(const std::string& path, const GaussianStats& s) {
  std::map<std::string, torch::Tensor> a = {{"mu", s.mu}, {"sigma", s.sigma}};
  if (!s.net.empty()) a["feature_net"] = codes_of(s.net);
  if (!s.images.empty()) a["images"] = codes_of(s.images);
  npz::write(path, a);
}

void check_same_net(const GaussianStats& s, const std::string& net, const std::string& what) {
  // An .npz names no network (pytorch-fid's): Inception's only when its width is Inception's.
  const int64_t dim = s.mu.defined() ? s.mu.numel() : 0;
  const std::string theirs = s.net.empty() && dim > 0 && dim != 2048
                                 ? "an unnamed network (" + std::to_string(dim) + "-d; no feature_net key, and "
                                   "Inception's pool3 is 2048-d)"
                                 : describe_feature_net(s.net);
  if (s.net != net)
    fail(what, ": statistics in the features of ", theirs, ", but this score uses ",
         describe_feature_net(net), net.empty() ? " (pass the same --features clf.pt)" : " (--features)",
         "; FIDs of different feature networks cannot be compared");
}

}  // namespace hamgan::metrics
