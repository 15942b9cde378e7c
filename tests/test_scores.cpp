// Inception Score and KID against numpy implementations of their definitions.
#include <gtest/gtest.h>

#include "metrics/inception_score.h"
#include "metrics/kid.h"
#include "support/oracle.h"

using namespace hamgan;
using namespace hamgan::test;

TEST(Scores, InceptionScoreMatchesNumpy) {
  const TensorMap d = load_tensors(oracle_path("scores.pt"));
  const metrics::ScoreStd s = metrics::inception_score(get(d, "logits"), 10);
  EXPECT_NEAR(s.mean, get(d, "is_mean").item<double>(), 1e-10 * s.mean);
  EXPECT_NEAR(s.std, get(d, "is_std").item<double>(), 1e-9);
}

TEST(Scores, KidMatchesNumpyOnFullSubsets) {
  // subset size = set size: every random subset is the whole set, so the estimate is exact.
  const TensorMap d = load_tensors(oracle_path("scores.pt"));
  const metrics::ScoreStd k = metrics::kernel_inception_distance(get(d, "x50"), get(d, "y"), 3, 1000, 1);
  const double want = get(d, "kid").item<double>();
  EXPECT_NEAR(k.mean, want, 1e-10 * std::abs(want) + 1e-12);
  EXPECT_NEAR(k.std, 0.0, 1e-12);
}

TEST(Scores, KidOfASetAgainstItselfIsNearZeroAndSubsetsVary) {
  const TensorMap d = load_tensors(oracle_path("scores.pt"));
  const torch::Tensor y = get(d, "y");
  const metrics::ScoreStd k = metrics::kernel_inception_distance(y, y, 20, 20, 5);
  EXPECT_GT(k.std, 0.0);  // subsets of 20 from 50 differ
  EXPECT_LT(std::abs(k.mean), 3 * k.std);
}
