// Inception Score and KID against numpy implementations of their definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "metrics/inception_score.h"
#include "metrics/kid.h"
#include "support/oracle.h"

namespace test_scores {

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
  EXPECT_TRUE(std::isnan(k.std)) << "every subset is the same: no spread, not one of rounding noise";
}

TEST(Scores, KidOfASetAgainstItselfIsNearZeroAndSubsetsVary) {
  const TensorMap d = load_tensors(oracle_path("scores.pt"));
  const torch::Tensor y = get(d, "y");
  const metrics::ScoreStd k = metrics::kernel_inception_distance(y, y, 20, 20, 5);
  EXPECT_GT(k.std, 0.0);  // subsets of 20 from 50 differ
  EXPECT_LT(std::abs(k.mean), 3 * k.std);
}

// n (50 real, 50 fake) at most the subset size (1000), as in the quickstart's scores: every
// subset is the whole set, and the spread printed "+- 6e-14". No spread now: the value alone,
// and a note saying why.
TEST(Scores, KidOfNoMoreSamplesThanItsSubsetSizeHasNoSpread) {
  const TensorMap d = load_tensors(oracle_path("scores.pt"));
  const metrics::ScoreStd k = metrics::kernel_inception_distance(get(d, "x50"), get(d, "y"), 100, 1000, 0);
  EXPECT_TRUE(std::isnan(k.std));
  const metrics::MetricValue v = metrics::shown_with_std(k);
  EXPECT_EQ(v.shown, "");  // printed as the value alone
  EXPECT_DOUBLE_EQ(v.value, k.mean);
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_EQ(v.notes[0], "kid has no +- spread: 50 real and 50 fake samples are at most its subset size 1000, so every "
                        "subset is the whole set");
  // 60 real against 50 fake: the real subsets of 50 differ, so the spread is measured.
  const torch::Tensor real60 = torch::cat({get(d, "x50"), get(d, "y").slice(0, 0, 10)});
  const metrics::ScoreStd k60 = metrics::kernel_inception_distance(real60, get(d, "y"), 20, 1000, 0);
  EXPECT_GT(k60.std, 0.0);
  EXPECT_NE(metrics::shown_with_std(k60).shown.find(" +- "), std::string::npos);
}

// One split (one image, as the registry's is takes for a single sample, or splits = 1): the
// spread over one value is 0 by construction, not a measured one; so is that of splits of one
// sample each.
TEST(Scores, InceptionScoreOfOneSplitHasNoSpread) {
  const TensorMap d = load_tensors(oracle_path("scores.pt"));
  for (const int64_t n : {1, 103}) {
    const metrics::ScoreStd s = metrics::inception_score(get(d, "logits").slice(0, 0, n), 1);
    EXPECT_TRUE(std::isnan(s.std)) << n;
    const metrics::MetricValue v = metrics::shown_with_std(s);
    EXPECT_EQ(v.shown, "") << n;
    ASSERT_EQ(v.notes.size(), 1u);
    EXPECT_EQ(v.notes[0], "is has no +- spread: " + std::to_string(n) + (n == 1 ? " sample" : " samples") +
                              " in a single split");
  }
  // Splits of one sample each (the registry's is below 10 samples): each scores 1, "1 +- 0".
  const metrics::ScoreStd two = metrics::inception_score(get(d, "logits").slice(0, 0, 2), 2);
  EXPECT_NEAR(two.mean, 1.0, 1e-12);
  EXPECT_TRUE(std::isnan(two.std));
  EXPECT_EQ(metrics::shown_with_std(two).notes.at(0),
            "is has no +- spread: its 2 splits hold one sample each, and the score of one sample is 1");
  EXPECT_GT(metrics::inception_score(get(d, "logits"), 10).std, 0.0);
}

}  // namespace test_scores
