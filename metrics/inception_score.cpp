#include "metrics/inception_score.h"
#include <algorithm>

#include <cmath>

#include "core/error.h"

namespace hamgan::metrics {

ScoreStd inception_score(const torch::Tensor& logits, int splits) {
  if (logits.dim() != 2) fail("inception_score: logits of shape ", logits.sizes(), ", expected [N, C]");
  const int64_t n = logits.size(0);
  if (splits < 1 || n < splits) fail("inception_score: ", n, " samples cannot form ", splits, " splits");
  const torch::Tensor logp = torch::log_softmax(logits.detach().to(torch::kCPU, torch::kDouble), 1);
  std::vector<double> scores;
  for (int k = 0; k < splits; ++k) {  // torch-fidelity's split boundaries: k * n / splits
    const torch::Tensor part = logp.slice(0, k * n / splits, (k + 1) * n / splits);
    const torch::Tensor log_py = part.exp().mean(0).log();
    const double kl = (part.exp() * (part - log_py)).sum(1).mean().item<double>();
    scores.push_back(std::exp(kl));
  }
  return mean_and_std(scores);
}

MetricValue score_is(MetricInputs& in) {
  const int64_t n = in.fake.pool.size(0);
  return shown_with_std(inception_score(in.fake.logits, static_cast<int>(std::min<int64_t>(10, n))));
}

}  // namespace hamgan::metrics
