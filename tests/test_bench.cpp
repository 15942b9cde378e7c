// gan/bench: the operator profile of `hamgan bench train --profile` (calls counted per
// operator, nested operators' time moved from the caller's self time to their own).
#include <gtest/gtest.h>

#include <map>

#include "gan/bench/op_profile.h"

using namespace hamgan;

TEST(OpProfile, CountsCallsAndSplitsSelfFromNestedTime) {
  const torch::Tensor a = torch::randn({64, 64}), b = torch::randn({64, 64});
  OpProfile p;
  for (int i = 0; i < 3; ++i) torch::mm(a, b);
  for (int i = 0; i < 2; ++i) torch::relu(a);  // relu calls clamp_min inside
  const std::vector<OpTime> ops = p.stop();
  std::map<std::string, OpTime> by;
  for (const auto& o : ops) {
    EXPECT_GE(o.self_us, 0.0) << o.name;
    EXPECT_LE(o.self_us, o.total_us + 1e-9) << o.name;
    by[o.name] = o;
  }
  ASSERT_TRUE(by.count("aten::mm") && by.count("aten::relu") && by.count("aten::clamp_min"));
  EXPECT_EQ(by["aten::mm"].calls, 3);
  EXPECT_EQ(by["aten::relu"].calls, 2);
  EXPECT_EQ(by["aten::clamp_min"].calls, 2);
  // relu's total = its self time + clamp_min's total (clamp_min is its only child here).
  EXPECT_NEAR(by["aten::relu"].total_us, by["aten::relu"].self_us + by["aten::clamp_min"].total_us, 1e-6);
  for (size_t i = 1; i < ops.size(); ++i) EXPECT_GE(ops[i - 1].self_us, ops[i].self_us);  // sorted
  // Nothing is recorded once stopped: a second profile sees only its own operators.
  torch::mm(a, b);
  OpProfile q;
  torch::relu(a);
  for (const auto& o : q.stop()) EXPECT_NE(o.name, "aten::mm");
}
