#include "metrics/kid.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"

namespace hamgan::metrics {

ScoreStd kernel_inception_distance(const torch::Tensor& real, const torch::Tensor& fake, int subsets,
                                   int64_t subset_size, uint64_t seed) {
  if (real.dim() != 2 || fake.dim() != 2 || real.size(1) != fake.size(1))
    fail("kid: feature shapes ", real.sizes(), " and ", fake.sizes(), " must be [N, d] with equal d");
  const int64_t m = std::min({subset_size, real.size(0), fake.size(0)});
  if (m < 2 || subsets < 1) fail("kid: need at least 2 samples per set and 1 subset (got m = ", m, ")");
  const torch::Tensor x = real.detach().to(torch::kCPU, torch::kDouble);
  const torch::Tensor y = fake.detach().to(torch::kCPU, torch::kDouble);
  const double d = static_cast<double>(x.size(1));
  auto kernel = [&](const torch::Tensor& a, const torch::Tensor& b) { return (a.mm(b.t()) / d + 1).pow(3); };
  torch::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<double> v;
  for (int s = 0; s < subsets; ++s) {
    const torch::Tensor xs = x.index_select(0, torch::randperm(x.size(0), gen, torch::kLong).slice(0, 0, m));
    const torch::Tensor ys = y.index_select(0, torch::randperm(y.size(0), gen, torch::kLong).slice(0, 0, m));
    const torch::Tensor kxx = kernel(xs, xs), kyy = kernel(ys, ys), kxy = kernel(xs, ys);
    const double md = static_cast<double>(m);
    const double a = (kxx.sum() - kxx.diagonal().sum()).item<double>() + (kyy.sum() - kyy.diagonal().sum()).item<double>();
    v.push_back(a / (md * (md - 1)) - 2 * kxy.sum().item<double>() / (md * md));
  }
  ScoreStd r = mean_and_std(v);
  if (m == x.size(0) && m == y.size(0)) {  // every subset is both whole sets: equal up to rounding
    r.std = std::numeric_limits<double>::quiet_NaN();
    r.no_spread_why = "kid has no +- spread: " + std::to_string(x.size(0)) + " real and " + std::to_string(y.size(0)) +
                      " fake samples are at most its subset size " + std::to_string(subset_size) +
                      ", so every subset is the whole set";
  }
  return r;
}

MetricValue score_kid(MetricInputs& in) {
  return shown_with_std(kernel_inception_distance(in.real_pool, in.fake.pool, 100, 1000, 0));
}

}  // namespace hamgan::metrics
