// Mode seeking (gan/train/mode_seeking.h) against the loop-over-pairs float64 oracle
// (tests/oracle/mode_seeking.py): value and gradient with respect to the fakes, with several
// pairs, one pair and none; in fp32 and bf16 fakes (computed in fp32) against the double value;
// gradcheck in double. The feature's run (resume bit for bit, its statistic, its checkpoint) is
// in the step-feature sweep of tests/test_d_regularisers.cpp.
#include <gtest/gtest.h>

#include "gan/train/mode_seeking.h"
#include "support/gradcheck.h"
#include "support/oracle.h"

namespace test_mode_seeking {

using namespace hamgan;
using namespace hamgan::test;

TEST(ModeSeeking, MatchesTheOracleValueAndGradient) {
  const TensorMap d = load_tensors(oracle_path("mode_seeking.pt"));
  for (const std::string name : {"pairs", "one_pair", "no_pair"}) {
    SCOPED_TRACE(name);
    torch::Tensor fake = get(d, name + ".fake").clone().requires_grad_(true);
    const torch::Tensor l = mode_seeking_loss(fake, get(d, name + ".z"), get(d, name + ".y"));
    ASSERT_EQ(l.scalar_type(), torch::kDouble);
    EXPECT_TRUE(close(l, get(d, name + ".value"), 1e-12, 1e-14));
    l.backward();
    EXPECT_TRUE(close(fake.grad(), get(d, name + ".grad"), 1e-10, 1e-14));
  }
  EXPECT_EQ(get(d, "no_pair.value").item<double>(), 0.0);
}

TEST(ModeSeeking, LowPrecisionFakesAreScoredInFp32) {
  const TensorMap d = load_tensors(oracle_path("mode_seeking.pt"));
  const torch::Tensor fake = get(d, "pairs.fake"), z = get(d, "pairs.z"), y = get(d, "pairs.y");
  const torch::Tensor f32 = mode_seeking_loss(fake.to(torch::kFloat), z.to(torch::kFloat), y);
  EXPECT_EQ(f32.scalar_type(), torch::kFloat);
  EXPECT_TRUE(close(f32.to(torch::kDouble), get(d, "pairs.value"), 1e-5, 0));
  // bf16 fakes: the same loss of the rounded images, in fp32.
  const torch::Tensor rounded = fake.to(torch::kBFloat16);
  const torch::Tensor b16 = mode_seeking_loss(rounded, z.to(torch::kFloat), y);
  EXPECT_EQ(b16.scalar_type(), torch::kFloat);
  EXPECT_TRUE(close(b16.to(torch::kDouble), mode_seeking_loss(rounded.to(torch::kDouble), z, y), 1e-5, 0));
}

TEST(ModeSeeking, GradcheckDouble) {
  torch::manual_seed(52);
  torch::Tensor fake = torch::randn({6, 1, 3, 3}, torch::kDouble).requires_grad_(true);
  const torch::Tensor z = torch::randn({6, 4}, torch::kDouble);
  const torch::Tensor y = torch::tensor({1, 0, 1, 2, 0, 1});
  EXPECT_TRUE(gradcheck([&] { return mode_seeking_loss(fake, z, y); }, {fake}));
}

}  // namespace test_mode_seeking
