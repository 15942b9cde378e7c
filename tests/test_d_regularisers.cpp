// D's regularisers against overfitting: DiffAugment (gan/train/diff_augment.h) and LeCam
// (gan/train/lecam.h), and the diagnosis `hamgan dgap` (gan/eval/d_gap.h), against the loop-by-loop float64 oracle (tests/oracle/d_regularisers.py),
// gradcheck in double through every transform, the draws' ranges, the config key, and a
// training run with both on that resumes bit for bit.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cstring>
#include <set>
#include <string>

#include "gan/config/config.h"
#include "gan/data/tensor_dataset.h"
#include "gan/eval/d_gap.h"
#include "gan/train/diff_augment.h"
#include "gan/train/lecam.h"
#include "support/errors.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/state_dicts.h"
#include "support/tiny_run.h"

using namespace hamgan;
using namespace hamgan::test;

namespace {

const char* kCases[] = {"rgb", "gray32", "odd"};
struct Policy {
  const char* name;
  DiffAugPolicy p;
};
const Policy kPolicies[] = {{"color", {true, false, false}},
                            {"translation", {false, true, false}},
                            {"cutout", {false, false, true}},
                            {"all", {true, true, true}}};

AugmentDraws draws_of(const TensorMap& d, const std::string& c) {
  AugmentDraws a;
  a.brightness = get(d, c + ".brightness");
  a.saturation = get(d, c + ".saturation");
  a.contrast = get(d, c + ".contrast");
  a.shift_x = get(d, c + ".shift_x");
  a.shift_y = get(d, c + ".shift_y");
  a.cut_x = get(d, c + ".cut_x");
  a.cut_y = get(d, c + ".cut_y");
  return a;
}

}  // namespace

// Both sides compute in float64 with the same draws; the transforms are a handful of adds and
// multiplies per element (means over <= 3 x 32 x 32 values): 1e-12 relative is rounding.
TEST(DiffAugment, MatchesTheLoopOracleForwardAndBackward) {
  const TensorMap d = load_tensors(oracle_path("d_regularisers.pt"));
  for (const char* c : kCases) {
    const torch::Tensor x0 = get(d, std::string(c) + ".x"), r = get(d, std::string(c) + ".r");
    const AugmentDraws dr = draws_of(d, c);
    for (const Policy& p : kPolicies) {
      const std::string key = std::string(c) + "." + p.name;
      for (bool nhwc : {false, true}) {  // D's input is channels-last in training
        torch::Tensor x = x0.clone();
        if (nhwc) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
        x.requires_grad_(true);
        const torch::Tensor y = diff_augment(x, p.p, dr);
        EXPECT_TRUE(close(y, get(d, key + ".y"), 1e-12, 1e-12)) << key << (nhwc ? " NHWC" : "");
        (y * r).sum().backward();
        EXPECT_TRUE(close(x.grad(), get(d, key + ".grad"), 1e-12, 1e-12)) << key << (nhwc ? " NHWC" : "");
      }
    }
  }
}

TEST(DiffAugment, GradcheckInDoubleThroughEveryTransform) {
  const TensorMap d = load_tensors(oracle_path("d_regularisers.pt"));
  const torch::Tensor x = get(d, "odd.x").clone().requires_grad_(true);
  const AugmentDraws dr = draws_of(d, "odd");
  for (const Policy& p : kPolicies)
    EXPECT_TRUE(gradcheck([&] { return diff_augment(x, p.p, dr); }, {x})) << p.name;
}

TEST(DiffAugment, FloatInputStaysFloatAndOffIsTheIdentity) {
  const torch::Tensor x = torch::randn({2, 1, 8, 8});
  at::Generator g = at::detail::createCPUGenerator(3);
  const DiffAugPolicy all{true, true, true};
  EXPECT_EQ(diff_augment(x, all, draw_augment(all, 2, 8, 8, g, torch::kCPU)).scalar_type(), torch::kFloat);
  EXPECT_TRUE(diff_augment(x, DiffAugPolicy{}, AugmentDraws{}).equal(x));
}

// The reference's ranges: shifts in [-r, r] with r = round(H / 8); cutout centres in [0, H] for
// an even side, [0, H) for an odd one. Every value turns up in 4000 draws, none outside.
TEST(DiffAugment, DrawsCoverExactlyThePapersRanges) {
  at::Generator g = at::detail::createCPUGenerator(7);
  const DiffAugPolicy all{true, true, true};
  const AugmentDraws a = draw_augment(all, 4000, 32, 9, g, torch::kCPU);
  const auto values = [](const torch::Tensor& t) {
    std::set<int64_t> s;
    for (int64_t i = 0; i < t.numel(); ++i) s.insert(t[i].item<int64_t>());
    return s;
  };
  const auto range = [](int64_t lo, int64_t hi) {
    std::set<int64_t> s;
    for (int64_t v = lo; v <= hi; ++v) s.insert(v);
    return s;
  };
  EXPECT_EQ(values(a.shift_x), range(-4, 4));   // H 32: r 4
  EXPECT_EQ(values(a.shift_y), range(-1, 1));   // W 9: r round(1.125) = 1
  EXPECT_EQ(values(a.cut_x), range(0, 32));     // side 16 (even): [0, 32]
  EXPECT_EQ(values(a.cut_y), range(0, 8));      // side 5 (odd): [0, 9)
  for (const torch::Tensor& u : {a.brightness, a.saturation, a.contrast}) {
    EXPECT_GE(u.min().item<float>(), 0.f);
    EXPECT_LT(u.max().item<float>(), 1.f);
    EXPECT_NEAR(u.mean().item<float>(), 0.5f, 0.03f);
  }
  // The same generator state gives the same draws (the trainer's RNG is checkpointed).
  at::Generator g1 = at::detail::createCPUGenerator(11), g2 = at::detail::createCPUGenerator(11);
  const AugmentDraws b = draw_augment(all, 5, 16, 16, g1, torch::kCPU), c = draw_augment(all, 5, 16, 16, g2, torch::kCPU);
  EXPECT_TRUE(b.cut_x.equal(c.cut_x) && b.shift_y.equal(c.shift_y) && b.contrast.equal(c.contrast));
}

TEST(DiffAugment, ConfigKeyReadsThePolicyAndNamesBadWords) {
  const DiffAugPolicy p = tiny("train.diffaug=translation,color").train.diffaug;
  EXPECT_TRUE(p.color && p.translation && !p.cutout);
  EXPECT_FALSE(tiny().train.diffaug.any());
  for (const char* bad : {"train.diffaug=colour", "train.diffaug=color,color", "train.diffaug=color,,cutout"}) {
    const std::string e = error_of([&] { tiny(bad); });
    EXPECT_NE(e.find("train.diffaug"), std::string::npos) << e;
    EXPECT_NE(e.find("color, translation, cutout"), std::string::npos) << e;
  }
}

// float32 on the C++ side (as in training) against the float64 oracle.
TEST(LeCam, MatchesTheOracleValueAndGradient) {
  const TensorMap d = load_tensors(oracle_path("d_regularisers.pt"));
  const torch::Tensor dr = get(d, "lecam.d_real").to(torch::kFloat).requires_grad_(true);
  const torch::Tensor df = get(d, "lecam.d_fake").to(torch::kFloat).requires_grad_(true);
  const torch::Tensor r =
      lecam_loss(dr, df, get(d, "lecam.a_real").to(torch::kFloat), get(d, "lecam.a_fake").to(torch::kFloat));
  EXPECT_TRUE(close(r.to(torch::kDouble), get(d, "lecam.value"), 1e-6, 1e-7));
  r.backward();
  EXPECT_TRUE(close(dr.grad().to(torch::kDouble), get(d, "lecam.grad_real"), 1e-6, 1e-7));
  EXPECT_TRUE(close(df.grad().to(torch::kDouble), get(d, "lecam.grad_fake"), 1e-6, 1e-7));
  // In double, against finite differences.
  const torch::Tensor xr = get(d, "lecam.d_real").clone().requires_grad_(true);
  const torch::Tensor xf = get(d, "lecam.d_fake").clone().requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return lecam_loss(xr, xf, get(d, "lecam.a_real"), get(d, "lecam.a_fake")); }, {xr, xf}));
}

TEST(LeCam, AnchorsAreTheDebiasedEmaAndSurviveACheckpoint) {
  const TensorMap d = load_tensors(oracle_path("d_regularisers.pt"));
  const torch::Tensor means = get(d, "anchors.means").to(torch::kFloat), want = get(d, "anchors.expected");
  LeCamAnchors a(get(d, "anchors.decay").item<double>(), torch::kCPU);
  EXPECT_FALSE(a.ready());
  for (int64_t t = 0; t < means.size(0); ++t) {
    a.update(means[t][0], means[t][1]);
    EXPECT_TRUE(a.ready());
    EXPECT_NEAR(a.real().item<double>(), want[t][0].item<double>(), 1e-5) << "update " << t + 1;
    EXPECT_NEAR(a.fake().item<double>(), want[t][1].item<double>(), 1e-5) << "update " << t + 1;
  }
  LeCamAnchors b(get(d, "anchors.decay").item<double>(), torch::kCPU);
  b.set_state(a.state());
  EXPECT_TRUE(b.real().equal(a.real()) && b.fake().equal(a.fake()));
  EXPECT_NE(error_of([&] { b.set_state(torch::zeros({2})); }).find("LeCam anchors"), std::string::npos);
}

// Training with both: the LeCam term is logged and positive once the anchors exist, the
// augmentation changes what D sees, and 2N straight equals N + resume + N bit for bit (draws
// come from the checkpointed RNG, anchors from the checkpoint).
TEST(DRegularisers, TrainingWithBothResumesBitForBit) {
  const std::string both = "train.diffaug=color,translation,cutout train.lecam_weight=0.3";
  const std::string a = fresh_dir("reg_straight"), b = fresh_dir("reg_resumed"), p = fresh_dir("reg_plain");
  const Ran straight = run(tiny(both), a);
  const Ran plain = run(tiny(), p);
  const Ran first = run(tiny(both + " train.iterations=3 train.checkpoint_every=0"), b);
  const Ran second = run(tiny(both), b);
  ASSERT_EQ(straight.history.size(), 6u);
  ASSERT_EQ(first.history.size() + second.history.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const IterStats& r = i < 3 ? first.history[i] : second.history[i - 3];
    for (int j = 0; j < kNumStats; ++j)
      EXPECT_EQ(std::memcmp(&straight.history[i][j], &r[j], sizeof(float)), 0)
          << "iteration " << i + 1 << " stat " << kStatNames[j].key << ": " << straight.history[i][j] << " vs " << r[j];
  }
  // n_dis 2: the first D step has no anchors yet, the second has.
  for (const IterStats& s : straight.history) EXPECT_GT(s[kLeCam], 0.f);
  for (const IterStats& s : plain.history) EXPECT_EQ(s[kLeCam], 0.f);
  EXPECT_NE(straight.history[0][kDReal], plain.history[0][kDReal]);
  const Loaded x = load_models(checkpoint_path(a + "/checkpoints", 6));
  const Loaded y = load_models(checkpoint_path(b + "/checkpoints", 6));
  EXPECT_TRUE(identical(x.d, y.d));
  EXPECT_TRUE(identical(x.g_ema, y.g_ema));
}

// dgap: the means are D's outputs on the images it names (the first n of a seed-0 shuffle, in
// [-1, 1], with their labels); the same images on both sides give a gap of exactly 0.
TEST(DGap, MeansAreDsOutputsOnTheShuffledImages) {
  const std::string dir = fresh_dir("dgap");
  run(tiny("train.iterations=3 generator.context.type=ham_nmf"), dir);  // random bases in training mode
  const CheckpointData c = load_checkpoint(checkpoint_path(dir + "/checkpoints", 3));
  torch::manual_seed(5);
  const torch::Tensor px = torch::randint(0, 256, {12, 1, 32, 32}).to(torch::kUInt8);
  const torch::Tensor y = torch::randint(0, 3, {12}, torch::kLong);
  const TensorDataset a(px, y), inverted(255 - px, y);
  const eval::DGapRow same = eval::d_gap(c, a, a, 7, torch::kCPU);
  EXPECT_EQ(same.gap(), 0.0);
  EXPECT_EQ(same.n, 7);
  EXPECT_EQ(same.iteration, 3);
  Discriminator d(c.config.model, c.config.discriminator);
  c.load_module("d", *d);
  d->eval();
  at::Generator shuffle = at::detail::createCPUGenerator(0);
  const torch::Tensor pick = torch::randperm(12, shuffle, torch::kLong).narrow(0, 0, 7);
  torch::NoGradGuard no_grad;
  const auto mean_d = [&](const torch::Tensor& images) {
    return d->forward(images.index_select(0, pick).to(torch::kFloat) / 127.5 - 1, y.index_select(0, pick))
        .mean()
        .item<double>();
  };
  EXPECT_NEAR(same.d_train, mean_d(px), 1e-6);
  torch::rand({17});  // whatever ran before must not change the fakes
  const eval::DGapRow other = eval::d_gap(c, a, inverted, 7, torch::kCPU);
  EXPECT_NEAR(other.d_test, mean_d(255 - px), 1e-6);
  EXPECT_NEAR(other.gap(), mean_d(px) - mean_d(255 - px), 1e-6);
  EXPECT_EQ(other.d_fake, same.d_fake);  // seeded latents and bases: the same fakes every time
  EXPECT_NE(error_of([&] { eval::d_gap(c, a, a, 13, torch::kCPU); }).find("expected 13"), std::string::npos);
}
