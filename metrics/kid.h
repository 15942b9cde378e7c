// Kernel Inception Distance (Binkowski et al. 2018): the unbiased MMD^2 estimate with the
// polynomial kernel k(x, y) = (x.y / d + 1)^3, averaged over `subsets` random subsets of
// `subset_size` (lowered to min(N_real, N_fake) when fewer samples exist). Computed in float64.
// When both sets hold at most subset_size samples, every subset is both whole sets: no spread
// (ScoreStd::std NaN, and a note why), where one would be rounding noise ("+- 6e-14").
#pragma once
#include <torch/torch.h>

#include "metrics/metric.h"
#include "metrics/score_std.h"

namespace hamgan::metrics {

ScoreStd kernel_inception_distance(const torch::Tensor& real, const torch::Tensor& fake, int subsets = 100,
                                   int64_t subset_size = 1000, uint64_t seed = 0);

// The registry's kid (metrics/metric.h): 100 subsets of 1000, seed 0.
MetricValue score_kid(MetricInputs& in);

}  // namespace hamgan::metrics
