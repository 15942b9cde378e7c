// Inception Score (Salimans et al. 2016): exp(E_x KL(p(y|x) || p(y))) over `splits` equal
// parts, with p(y|x) the softmax of the 1008 logits without the fc bias (torch-fidelity's
// logits_unbiased). Computed in float64. A single split, or splits of one image each (every one
// scoring 1), has no spread: ScoreStd::std NaN, and a note why.
#pragma once
#include <torch/torch.h>

#include "metrics/metric.h"
#include "metrics/score_std.h"

namespace hamgan::metrics {

ScoreStd inception_score(const torch::Tensor& logits_unbiased, int splits = 10);  // [N, C]

// The registry's is (metrics/metric.h): 10 splits, or one per image below 10 images.
MetricValue score_is(MetricInputs& in);

}  // namespace hamgan::metrics
