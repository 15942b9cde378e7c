// Precision/recall/density/coverage and intra-class FID against the float64 scipy oracle
// (tests/oracle/prdc.py), plus cases whose answer follows from the definitions alone.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "metrics/intra_class_fid.h"
#include "metrics/prdc.h"
#include "support/oracle.h"

namespace test_prdc {

using namespace hamgan;
using namespace hamgan::test;

namespace {
// The fractions are counts over a set size. The oracle keeps every comparison more than 1e-5
// (relative) away from its ball's boundary, so float32 here and float64 there count the same
// and the fractions agree up to the rounding of one division.
constexpr double kFracTol = 1e-9;
constexpr double kFidRtol = 1e-6;  // as test_frechet: Eigen's eigenvalues vs scipy.linalg.sqrtm

void expect_equal(const metrics::Prdc& a, const metrics::Prdc& b, const std::string& what) {
  EXPECT_EQ(a.precision, b.precision) << what;
  EXPECT_EQ(a.recall, b.recall) << what;
  EXPECT_EQ(a.density, b.density) << what;
  EXPECT_EQ(a.coverage, b.coverage) << what;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(Prdc, MatchesScipyOracle) {
  const TensorMap d = load_tensors(oracle_path("prdc.pt"));
  for (const char* c : {"gauss", "shifted", "offset"}) {
    const std::string p(c);
    const metrics::Prdc got = metrics::precision_recall_density_coverage(get(d, p + ".real"), get(d, p + ".fake"));
    EXPECT_NEAR(got.precision, get(d, p + ".precision").item<double>(), kFracTol) << c;
    EXPECT_NEAR(got.recall, get(d, p + ".recall").item<double>(), kFracTol) << c;
    EXPECT_NEAR(got.density, get(d, p + ".density").item<double>(), kFracTol) << c;
    EXPECT_NEAR(got.coverage, get(d, p + ".coverage").item<double>(), kFracTol) << c;
  }
}

TEST(Prdc, BlockSizeAndDtypeDoNotChangeTheCounts) {
  const TensorMap d = load_tensors(oracle_path("prdc.pt"));
  const torch::Tensor real = get(d, "gauss.real"), fake = get(d, "gauss.fake");
  const metrics::Prdc whole = metrics::precision_recall_density_coverage(real, fake, 3, 5, 1024);
  for (int64_t block : {1, 7, 64, 200})
    expect_equal(metrics::precision_recall_density_coverage(real, fake, 3, 5, block), whole,
                 "block " + std::to_string(block));
  // float64 input holding float32 values: the same float32 computation
  expect_equal(metrics::precision_recall_density_coverage(real.to(torch::kDouble), fake.to(torch::kDouble)), whole,
               "float64");
}

TEST(Prdc, IdenticalSets) {
  torch::manual_seed(3);
  // Integer coordinates in [-600, 600) and the set closed under negation (mean exactly 0): every
  // norm, dot product and squared distance is an integer below 2^24, so exact in fp32 whatever
  // order a GEMM kernel sums in. With Gaussian features the tie at each ball's boundary (the
  // k-th neighbour) was decided by rounding: d(i, j) and d(j, i) come from different GEMM tiles,
  // and OpenBLAS's AVX2 kernels (scripts/emulate_cpu.sh avx2) gave density 1.016.
  const torch::Tensor half = torch::randint(-600, 600, {150, 10}).to(torch::kFloat);
  const torch::Tensor x = torch::cat({half, -half});
  for (int64_t block : {7, 1024}) {
    const metrics::Prdc s = metrics::precision_recall_density_coverage(x, x, 3, 5, block);
    EXPECT_EQ(s.precision, 1.0);  // every fake sits at the centre of its own real ball
    EXPECT_EQ(s.recall, 1.0);
    EXPECT_EQ(s.coverage, 1.0);
    // Each real ball (open, as prdc's) holds its own copy and its k - 1 nearest neighbours; the
    // k-th lies on the boundary, outside (no other ties in random data): density = k M / (k M).
    EXPECT_NEAR(s.density, 1.0, kFracTol);
  }
}

TEST(Prdc, FarApartSetsScoreZero) {
  torch::manual_seed(4);
  const torch::Tensor real = torch::randn({50, 4}), fake = torch::randn({40, 4}) + 100.0;
  const metrics::Prdc s = metrics::precision_recall_density_coverage(real, fake);
  EXPECT_EQ(s.precision, 0.0);
  EXPECT_EQ(s.recall, 0.0);
  EXPECT_EQ(s.density, 0.0);
  EXPECT_EQ(s.coverage, 0.0);
}

TEST(Prdc, BadInputsAreClearErrors) {
  const torch::Tensor x = torch::randn({20, 4});
  auto prdc = [](const torch::Tensor& r, const torch::Tensor& f, int64_t k_pr = 3, int64_t k_dc = 5,
                 int64_t block = 1024) { metrics::precision_recall_density_coverage(r, f, k_pr, k_dc, block); };
  EXPECT_THROW(prdc(torch::randn({20}), x), Error);
  EXPECT_THROW(prdc(x, torch::randn({2, 10, 4})), Error);
  EXPECT_NE(error_of([&] { prdc(x, torch::randn({20, 5})); }).find("same d"), std::string::npos);
  EXPECT_THROW(prdc(x, x, 0, 5), Error);
  EXPECT_THROW(prdc(x, x, 3, 0), Error);
  EXPECT_THROW(prdc(x, x, 3, 5, 0), Error);
  EXPECT_NE(error_of([&] { prdc(x.slice(0, 0, 5), x); }).find("5 real points, expected at least 6"),
            std::string::npos);
  EXPECT_NE(error_of([&] { prdc(x, x.slice(0, 0, 3)); }).find("3 fake points, expected at least k_pr + 1 = 4"),
            std::string::npos);
  torch::Tensor bad = x.clone();
  bad[0][0].fill_(std::nan(""));
  EXPECT_THROW(prdc(x, bad), Error);
  EXPECT_NO_THROW(prdc(x.slice(0, 0, 6), x.slice(0, 0, 4)));  // the smallest sets allowed
}

TEST(IntraClassFid, MatchesScipyOracle) {
  const TensorMap d = load_tensors(oracle_path("prdc.pt"));
  const metrics::IntraClassFid got = metrics::intra_class_fid(
      get(d, "icfid.real"), get(d, "icfid.real_labels"), get(d, "icfid.fake"), get(d, "icfid.fake_labels"), 3);
  const torch::Tensor want = get(d, "icfid.per_class");
  ASSERT_EQ(got.per_class.size(), 3u);
  for (int64_t c = 0; c < 3; ++c) {
    const double w = want[c].item<double>();
    EXPECT_NEAR(got.per_class[c], w, kFidRtol * std::abs(w)) << "class " << c;
  }
  const double mean = get(d, "icfid.mean").item<double>();
  EXPECT_NEAR(got.mean, mean, kFidRtol * std::abs(mean));
  EXPECT_EQ(got.n_real, (std::vector<int64_t>{40, 45, 38}));
  EXPECT_EQ(got.n_fake, (std::vector<int64_t>{42, 39, 41}));
  // ~40 images per class for 4 dimensions: nothing to warn about
  EXPECT_TRUE(got.warnings.empty()) << (got.warnings.empty() ? "" : got.warnings.front());
}

TEST(IntraClassFid, ClassWithTooFewImagesIsNanAndLeftOutOfTheMean) {
  const TensorMap d = load_tensors(oracle_path("prdc.pt"));
  // a 4th class with no images at all
  const metrics::IntraClassFid got = metrics::intra_class_fid(
      get(d, "icfid.real"), get(d, "icfid.real_labels"), get(d, "icfid.fake"), get(d, "icfid.fake_labels"), 4);
  ASSERT_EQ(got.per_class.size(), 4u);
  EXPECT_TRUE(std::isnan(got.per_class[3]));
  const double mean = get(d, "icfid.mean").item<double>();
  EXPECT_NEAR(got.mean, mean, kFidRtol * std::abs(mean));
  ASSERT_EQ(got.warnings.size(), 1u);
  EXPECT_NE(got.warnings[0].find("class 3: 0 real and 0 fake images"), std::string::npos) << got.warnings[0];

  // one real image of class 1: NaN; the mean is class 0's alone
  torch::manual_seed(5);
  const torch::Tensor real = torch::randn({10, 2}), fake = torch::randn({10, 2});
  const torch::Tensor rl = torch::tensor({0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
  const torch::Tensor fl = torch::tensor({0, 1, 0, 1, 0, 1, 0, 1, 0, 1});
  const metrics::IntraClassFid one = metrics::intra_class_fid(real, rl, fake, fl, 2);
  EXPECT_TRUE(std::isfinite(one.per_class[0]));
  EXPECT_TRUE(std::isnan(one.per_class[1]));
  EXPECT_EQ(one.mean, one.per_class[0]);
  EXPECT_EQ(one.n_real, (std::vector<int64_t>{9, 1}));
  EXPECT_EQ(one.n_fake, (std::vector<int64_t>{5, 5}));
}

TEST(IntraClassFid, WarnsWhenAClassHasNoMoreImagesThanDimensions) {
  torch::manual_seed(6);
  const torch::Tensor real = torch::randn({25, 8}), fake = torch::randn({26, 8});
  const torch::Tensor rl = torch::cat({torch::zeros({5}, torch::kLong), torch::ones({20}, torch::kLong)});
  const torch::Tensor fl = torch::cat({torch::zeros({6}, torch::kLong), torch::ones({20}, torch::kLong)});
  const metrics::IntraClassFid got = metrics::intra_class_fid(real, rl, fake, fl, 2);
  ASSERT_EQ(got.warnings.size(), 1u);  // class 1 (20 > 8 per side) is fine
  EXPECT_NE(got.warnings[0].find("class 0: 5 real and 6 fake images for 8-dimensional features: the covariance is "
                                 "singular"),
            std::string::npos)
      << got.warnings[0];
  EXPECT_TRUE(std::isfinite(got.per_class[0]));  // still computed, and in the mean
  EXPECT_EQ(got.mean, (got.per_class[0] + got.per_class[1]) / 2);
}

TEST(IntraClassFid, BadLabelsAreClearErrors) {
  const torch::Tensor x = torch::randn({6, 3});
  const torch::Tensor l = torch::tensor({0, 0, 0, 1, 1, 1});
  EXPECT_NO_THROW(metrics::intra_class_fid(x, l, x, l, 2));
  EXPECT_NE(error_of([&] { metrics::intra_class_fid(x, l, x, l, 1); }).find("expected [0, 1)"), std::string::npos);
  EXPECT_THROW(metrics::intra_class_fid(x, l.slice(0, 0, 5), x, l, 2), Error);
  EXPECT_THROW(metrics::intra_class_fid(x, l, x, l.to(torch::kFloat), 2), Error);
  EXPECT_THROW(metrics::intra_class_fid(x, l, torch::randn({6, 4}), l, 2), Error);
  EXPECT_THROW(metrics::intra_class_fid(x, l, x, l, 0), Error);
}

}  // namespace test_prdc
