#include "metrics/inception_score.h"
#include <algorithm>

#include <cmath>
#include <limits>
#include <string>

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
  ScoreStd r = mean_and_std(scores);
  // One split has nothing to vary over; splits of one sample each score exp(0) = 1 every one.
  if (splits == 1) {
    r.std = std::numeric_limits<double>::quiet_NaN();
    r.no_spread_why = "is has no +- spread: " + std::to_string(n) + " sample" + (n == 1 ? "" : "s") + " in a single split";
  } else if (n == splits) {
    r.std = std::numeric_limits<double>::quiet_NaN();
    r.no_spread_why = "is has no +- spread: its " + std::to_string(n) +
                      " splits hold one sample each, and the score of one sample is 1";
  }
  return r;
}

MetricValue score_is(MetricInputs& in) {
  const int64_t n = in.fake.pool.size(0);
  return shown_with_std(inception_score(in.fake.logits, static_cast<int>(std::min<int64_t>(10, n))));
}

}  // namespace hamgan::metrics
