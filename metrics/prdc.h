// Precision, recall, density and coverage of generated features against real ones, from balls
// B(x, NND_k(x)) whose radius is the distance to x's k-th nearest *other* point of its own set:
//  - precision / recall (Kynkaanniemi et al. 2019, "Improved precision and recall metric for
//    assessing generative models", k = 3): precision = fraction of fakes inside at least one
//    real ball; recall = fraction of reals inside at least one fake ball.
//  - density / coverage (Naeem et al. 2020, "Reliable fidelity and diversity metrics for
//    generative models", k = 5, real balls only):
//      density  = 1/(kM) sum_j sum_i 1[Y_j in B(X_i, NND_k(X_i))]   (can exceed 1)
//      coverage = 1/N sum_i 1[min_j ||X_i - Y_j|| < NND_k(X_i)]
// As in the authors' `prdc` package (the reference the oracle follows), a point is not one of
// its own k neighbours and a ball is open (<): a point on the boundary is outside. Kynkaanniemi
// et al.'s Eq. 1 writes <=; the two differ only on exact ties such as duplicated points.
// Duplicates matter: a point with k or more exact copies has radius 0, and its open ball holds
// nothing, so a set of copies scores 0 against itself. The definition is kept (it is the
// published one); such radii are reported in `warnings`, naming the set, so a 0 is not read
// as a result about the generator.
#pragma once
#include <torch/torch.h>

#include "metrics/metric.h"

#include <string>
#include <vector>

namespace hamgan::metrics {

struct Prdc {
  double precision = 0, recall = 0, density = 0, coverage = 0;
  // One line per set ("real", "fake") with points whose k-NN radius is 0, saying how many and
  // which metrics they empty.
  std::vector<std::string> warnings;
};

// real [N, d], fake [M, d]: any float dtype, any device (computed there in float32; squared
// distances blockwise, `block` rows x N at a time, so N x M never materialises).
Prdc precision_recall_density_coverage(const torch::Tensor& real, const torch::Tensor& fake, int64_t k_pr = 3,
                                       int64_t k_dc = 5, int64_t block = 1024);

// The registry's precision, recall (k 3), density and coverage (k 5) (metrics/metric.h): one
// k-NN pass shared through MetricInputs::cache; its warnings go with the first of them asked.
MetricValue score_precision(MetricInputs& in);
MetricValue score_recall(MetricInputs& in);
MetricValue score_density(MetricInputs& in);
MetricValue score_coverage(MetricInputs& in);

}  // namespace hamgan::metrics
