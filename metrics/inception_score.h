// Inception Score (Salimans et al. 2016): exp(E_x KL(p(y|x) || p(y))) over `splits` equal
// parts, with p(y|x) the softmax of the 1008 logits without the fc bias (torch-fidelity's
// logits_unbiased). Computed in float64.
#pragma once
#include <torch/torch.h>

namespace hamgan::metrics {

struct ScoreStd {
  double mean = 0, std = 0;
};

ScoreStd inception_score(const torch::Tensor& logits_unbiased, int splits = 10);  // [N, C]

}  // namespace hamgan::metrics
