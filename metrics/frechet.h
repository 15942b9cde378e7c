// Frechet distance between Gaussians N(mu1, S1), N(mu2, S2) (Heusel et al. 2017, FID):
//   ||mu1 - mu2||^2 + tr S1 + tr S2 - 2 tr (S1^1/2 S2 S1^1/2)^1/2
// The last trace is sum_i sqrt(max(lambda_i, 0)) over the eigenvalues of the symmetric PSD matrix
// S1^1/2 S2 S1^1/2 (same spectrum as S1 S2), so it needs no complex sqrtm, no eps retry, and is
// exact for singular S (N < d). Eigenvalues at rounding level (< d eps lambda_max) count as 0.
#pragma once
#include <torch/torch.h>

#include "metrics/metric.h"

namespace hamgan::metrics {

// mu: [d], sigma: [d, d]; any float dtype (computed in float64 with LAPACK's symmetric eigensolver).
double frechet_distance(const torch::Tensor& mu1, const torch::Tensor& sigma1, const torch::Tensor& mu2,
                        const torch::Tensor& sigma2);

// The registry's fid (metrics/metric.h): the fake features' statistics against the reference's.
MetricValue score_fid(MetricInputs& in);

}  // namespace hamgan::metrics
