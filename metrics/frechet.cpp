#include "metrics/frechet.h"
#include "metrics/statistics.h"

#include <Eigen/Dense>

#include <cmath>
#include <limits>

#include "core/error.h"

namespace hamgan::metrics {

namespace {

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Eigenvalues of a PSD matrix below d * eps * lambda_max are rounding noise around 0 (the
// numerical-rank cutoff of numpy.linalg.matrix_rank); sqrt would amplify them to ~1e-8 each.
Eigen::VectorXd psd_sqrt(const Eigen::VectorXd& lambda) {
  const double tol = lambda.size() * std::numeric_limits<double>::epsilon() * std::max(lambda.maxCoeff(), 0.0);
  return lambda.unaryExpr([tol](double l) { return l > tol ? std::sqrt(l) : 0.0; });
}

Mat to_eigen(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kCPU, torch::kDouble).contiguous();
  return Eigen::Map<const Mat>(c.data_ptr<double>(), c.size(0), c.size(1));
}

}  // namespace

double frechet_distance(const torch::Tensor& mu1, const torch::Tensor& sigma1, const torch::Tensor& mu2,
                        const torch::Tensor& sigma2) {
  const int64_t d = mu1.numel();
  if (mu1.dim() != 1 || mu2.dim() != 1 || mu2.numel() != d)
    fail("frechet_distance: mu shapes ", mu1.sizes(), " and ", mu2.sizes(), " must both be [d]");
  for (const auto* s : {&sigma1, &sigma2})
    if (s->dim() != 2 || s->size(0) != d || s->size(1) != d)
      fail("frechet_distance: sigma of shape ", s->sizes(), ", expected [", d, ", ", d, "]");
  Mat s1 = to_eigen(sigma1), s2 = to_eigen(sigma2);
  s1 = 0.5 * (s1 + s1.transpose()).eval();  // symmetric up to rounding; the solver reads one triangle
  s2 = 0.5 * (s2 + s2.transpose()).eval();
  Eigen::SelfAdjointEigenSolver<Mat> e1(s1);
  if (e1.info() != Eigen::Success) fail("frechet_distance: eigen-decomposition of sigma1 failed");
  const Eigen::VectorXd r = psd_sqrt(e1.eigenvalues());
  const Mat sqrt1 = e1.eigenvectors() * r.asDiagonal() * e1.eigenvectors().transpose();
  Mat m = sqrt1 * s2 * sqrt1;
  m = 0.5 * (m + m.transpose()).eval();
  Eigen::SelfAdjointEigenSolver<Mat> e2(m, Eigen::EigenvaluesOnly);
  if (e2.info() != Eigen::Success) fail("frechet_distance: eigen-decomposition of S1^1/2 S2 S1^1/2 failed");
  const double tr_covmean = psd_sqrt(e2.eigenvalues()).sum();
  const torch::Tensor diff = (mu1.to(torch::kCPU, torch::kDouble) - mu2.to(torch::kCPU, torch::kDouble));
  return diff.dot(diff).item<double>() + s1.trace() + s2.trace() - 2.0 * tr_covmean;
}

MetricValue score_fid(MetricInputs& in) {
  const auto fs = compute_stats(in.fake.pool);
  MetricValue v;
  v.value = frechet_distance(in.real_mu, in.real_sigma, fs.mu, fs.sigma);
  return v;
}

}  // namespace hamgan::metrics
