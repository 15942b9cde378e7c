#include "metrics/frechet.h"
#include "metrics/statistics.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace hamgan::metrics {

namespace {

// Eigenvalues of a PSD matrix below d * eps * lambda_max are rounding noise around 0 (the
// numerical-rank cutoff of numpy.linalg.matrix_rank); sqrt would amplify them to ~1e-8 each.
torch::Tensor psd_sqrt(const torch::Tensor& lambda) {
  const double tol = lambda.numel() * std::numeric_limits<double>::epsilon() *
                     std::max(lambda.max().item<double>(), 0.0);  // host read: a CPU tensor
  return torch::where(lambda > tol, lambda.clamp_min(0).sqrt(), torch::zeros_like(lambda));
}

torch::Tensor symmetric(const torch::Tensor& s) { return 0.5 * (s + s.t()); }

}  // namespace

// The decompositions are LAPACK's (syevd through torch::linalg): for d = 2048 a few times faster
// than a portable solver, and they use the BLAS threads the command was given.
double frechet_distance(const torch::Tensor& mu1, const torch::Tensor& sigma1, const torch::Tensor& mu2,
                        const torch::Tensor& sigma2) {
  const int64_t d = mu1.numel();
  if (mu1.dim() != 1 || mu2.dim() != 1 || mu2.numel() != d)
    fail("frechet_distance: mu shapes ", mu1.sizes(), " and ", mu2.sizes(), " must both be [d]");
  for (const auto* s : {&sigma1, &sigma2})
    if (s->dim() != 2 || s->size(0) != d || s->size(1) != d)
      fail("frechet_distance: sigma of shape ", s->sizes(), ", expected [", d, ", ", d, "]");
  const auto f64 = [](const torch::Tensor& t) { return t.detach().to(torch::kCPU, torch::kDouble); };
  // Symmetric up to rounding; the solvers read one triangle.
  const torch::Tensor s1 = symmetric(f64(sigma1)), s2 = symmetric(f64(sigma2));
  torch::Tensor tr_covmean;
  try {
    const auto [lambda1, v1] = torch::linalg_eigh(s1);
    const torch::Tensor sqrt1 = (v1 * psd_sqrt(lambda1)).mm(v1.t());  // V diag(sqrt lambda) V^T
    tr_covmean = psd_sqrt(torch::linalg_eigvalsh(symmetric(sqrt1.mm(s2).mm(sqrt1)))).sum();
  } catch (const c10::Error& e) {
    fail("frechet_distance: the eigen-decomposition of S1 or S1^1/2 S2 S1^1/2 failed (a covariance with NaN "
         "or inf?): ", e.what_without_backtrace());
  }
  const torch::Tensor diff = f64(mu1) - f64(mu2);
  // host read: CPU tensors, the score itself
  return (diff.dot(diff) + s1.trace() + s2.trace() - 2.0 * tr_covmean).item<double>();
}

MetricValue score_fid(MetricInputs& in) {
  const auto fs = compute_stats(in.fake.pool);
  MetricValue v;
  v.value = frechet_distance(in.real_mu, in.real_sigma, fs.mu, fs.sigma);
  return v;
}

}  // namespace hamgan::metrics
