// D's regularisers: DiffAugment (gan/train/diff_augment.h), LeCam (gan/train/lecam.h) and R1
// (gan/train/r1.h), and the diagnosis `hamgan dgap` (gan/eval/d_gap.h), against the loop-by-loop
// float64 oracle (tests/oracle/d_regularisers.py; R1 on its reference D), gradcheck in double
// through every transform and of R1's penalty, the draws' ranges, the config keys, a training
// run with DiffAugment and LeCam on that resumes bit for bit, and the sweep over every
// registered step feature (gan/train/step_feature.h): resume equality, its statistics in
// metrics.jsonl, its checkpointed state's round trip.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "core/state_dict.h"
#include "gan/config/config.h"
#include "gan/data/tensor_dataset.h"
#include "gan/eval/d_gap.h"
#include "gan/models/discriminator.h"
#include "gan/train/diff_augment.h"
#include "gan/train/lecam.h"
#include "gan/train/r1.h"
#include "gan/train/step_feature.h"
#include "gan/train/train_stats_plot.h"
#include "layers/context/context.h"
#include "support/errors.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/state_dicts.h"
#include "support/tiny_run.h"

namespace test_d_regularisers {

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
    ASSERT_EQ(r.size(), stat_names().size());
    for (size_t j = 0; j < r.size(); ++j)
      EXPECT_EQ(std::memcmp(&straight.history[i][j], &r[j], sizeof(float)), 0)
          << "iteration " << i + 1 << " stat " << stat_names()[j].key << ": " << straight.history[i][j] << " vs " << r[j];
  }
  // n_dis 2: the first D step has no anchors yet, the second has.
  const int64_t lecam = stat_index("d_lecam");
  for (const IterStats& s : straight.history) EXPECT_GT(s[lecam], 0.f);
  for (const IterStats& s : plain.history) EXPECT_EQ(s[lecam], 0.f);
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

namespace {

// test_models' D at 32 (ch 4, 5 classes, one channel, self-attention at 16): the oracle's
// reference D (sagan_ref.py), in float64 with the oracle's weights.
Discriminator reference_d(const TensorMap& d, const std::string& key) {
  const Config cfg = parse_config(
      "model: {resolution: 32, n_classes: 5, image_channels: 1}\n"
      "generator: {ch: 4, z_dim: 16, context: {type: self_attention, resolution: 32}}\n"
      "discriminator: {ch: 4, context: {type: self_attention, resolution: 16}}\n",
      "R1 test config");
  Discriminator dis(cfg.model, cfg.discriminator);
  dis->to(torch::kDouble);
  load_state_dict(*dis, with_prefix(d, key + ".init"), key);
  return dis;
}

}  // namespace

// Both sides in float64 through the same D in train mode (one power iteration): the penalty and
// its gradient with respect to every parameter of D (a double backward through the blocks,
// attention and spectral norm) agree to 1e-9 relative, rounding. Through DiffAugment the
// gradient is taken with respect to the images before T, as the trainer does.
TEST(R1, MatchesTheReferenceDsPenaltyAndItsParameterGradients) {
  const TensorMap d = load_tensors(oracle_path("d_regularisers.pt"));
  const AugmentDraws dr = draws_of(d, "gray32");
  const DiffAugPolicy all{true, true, true};
  for (const std::string key : {"r1", "r1_all"}) {
    Discriminator dis = reference_d(d, key);
    dis->train();
    const torch::Tensor x = get(d, "gray32.x").clone().requires_grad_(true);
    const torch::Tensor seen = key == "r1" ? x : diff_augment(x, all, dr);
    const torch::Tensor p = r1_penalty(dis->forward(seen, get(d, "r1.y")), x);
    EXPECT_TRUE(close(p, get(d, key + ".value"), 1e-9, 1e-12)) << key;
    p.backward();
    // D's input gradient does not depend on the linear head's bias: no gradient there (0).
    for (const auto& kv : dis->named_parameters()) {
      const torch::Tensor grad = kv.value().grad().defined() ? kv.value().grad() : torch::zeros_like(kv.value());
      EXPECT_TRUE(close(grad, get(d, key + ".grad." + kv.key()), 1e-8, 1e-12)) << key << " " << kv.key();
    }
  }
  // R2's feature takes the same penalty of the images on D's fake side (its term: gamma / 2 x
  // every x the penalty), and its parameter gradients are the reference's.
  Discriminator dis = reference_d(d, "r1");
  dis->train();
  const auto r2 = make_r2_feature(tiny("train.r2_gamma=4 train.r2_every=2"), torch::kCPU);
  r2->begin_d_step(0);
  ASSERT_TRUE(r2->wants_fake_grad());
  const torch::Tensor x = get(d, "gray32.x").clone().requires_grad_(true);
  const torch::Tensor o = dis->forward(x, get(d, "r1.y"));
  const torch::Tensor term = r2->d_loss(DMicroBatch{{}, x, {}, o, 1.0});
  EXPECT_TRUE(close(term / 4.0, get(d, "r1.value"), 1e-9, 1e-12));
  (term / 4.0).backward();
  for (const auto& kv : dis->named_parameters()) {
    const torch::Tensor grad = kv.value().grad().defined() ? kv.value().grad() : torch::zeros_like(kv.value());
    EXPECT_TRUE(close(grad, get(d, "r1.grad." + kv.key()), 1e-8, 1e-12)) << "R2 " << kv.key();
  }
}

// The penalty's gradient (autograd's double backward) against finite differences in double, in
// eval mode (spectral norm's u fixed between the evaluations, after 30 power iterations: the
// oracle's random u would leave sigma far below the weights' norm and the outputs ~1e20), for the
// images and D's first convolution, attention gate, class embedding and linear head. Steps of
// 1e-7: the penalty jumps where a ReLU's input crosses 0 (D's gradient holds ReLU'), and at 1e-5
// one of D's ~10^4 activations lay within a step of 0 (0.9% off on one weight).
TEST(R1, PenaltyGradcheckDouble) {
  const TensorMap d = load_tensors(oracle_path("d_regularisers.pt"));
  Discriminator dis = reference_d(d, "r1");
  const torch::Tensor x = get(d, "gray32.x").narrow(0, 0, 2).clone().requires_grad_(true);
  const torch::Tensor y = get(d, "r1.y").narrow(0, 0, 2);
  {
    torch::NoGradGuard no_grad;
    dis->train();
    for (int i = 0; i < 30; ++i) dis->forward(x, y);
  }
  dis->eval();
  auto p = dis->named_parameters();
  const std::vector<torch::Tensor> leaves = {x, p["blocks.0.conv1.weight_orig"], p["context.gamma"],
                                             p["embed.weight_orig"], p["linear.weight_orig"]};
  // gradcheck's finite differences evaluate f under no_grad; the penalty needs D's gradient.
  const auto penalty = [&] {
    const bool outer = torch::GradMode::is_enabled();
    const torch::AutoGradMode grad_on(true);
    const torch::Tensor p = r1_penalty(dis->forward(x, y), x);
    return outer ? p : p.detach();
  };
  EXPECT_TRUE(gradcheck(penalty, leaves, 1e-7, 1e-7, 1e-5, 24));
}

// Lazy: the term gamma / 2 * k * penalty on the run's D steps 0, k, 2k, ... only (the count
// continues across a resume); other steps add nothing and ask for no input gradient. d_r1 holds
// the latest step's penalty, the mean over its micro-batches.
TEST(R1, LazyEveryKDStepsScaledByK) {
  const auto f = make_r1_feature(tiny("train.r1_gamma=3 train.r1_every=4"), torch::kCPU);
  torch::manual_seed(9);
  const torch::Tensor x = torch::randn({2, 1, 4, 4}).requires_grad_(true), w = torch::randn({1, 1, 4, 4});
  const double norm2 = w.square().sum().item<double>();  // ||dD/dx_i||^2 of D(x) = <x, w>
  EXPECT_EQ(f->stats()[0].item<float>(), 0.f);
  for (int64_t s = 0; s < 9; ++s) {
    f->begin_d_step(s);
    EXPECT_EQ(f->wants_real_grad(), s % 4 == 0) << "D step " << s;
    for (int micro = 0; micro < 2; ++micro) {
      const torch::Tensor o = (x * w).flatten(1).sum(1);
      const torch::Tensor t = f->d_loss(DMicroBatch{x, {}, o, o, 0.5});
      if (s % 4 == 0) EXPECT_NEAR(t.item<double>(), 3.0 / 2 * 4 * norm2, 1e-4 * norm2) << "D step " << s;
      else EXPECT_FALSE(t.defined()) << "D step " << s;
    }
    f->end_d_step(torch::zeros({}), torch::zeros({}), nullptr);
    EXPECT_NEAR(f->stats()[0].item<double>(), norm2, 1e-5 * norm2) << "D step " << s;
  }
}

// R2 is the same lazy term on the fakes: it asks for the fakes' input gradient, never the reals',
// and its value is the penalty of D's outputs on the fakes (here D(x) = <x, w> on the reals and
// <x, 2w> on the fakes: 4 ||w||^2).
TEST(R2, LazyEveryKDStepsOnTheFakes) {
  const auto f = make_r2_feature(tiny("train.r2_gamma=3 train.r2_every=4"), torch::kCPU);
  torch::manual_seed(9);
  const torch::Tensor xr = torch::randn({2, 1, 4, 4}).requires_grad_(true), w = torch::randn({1, 1, 4, 4});
  const torch::Tensor xf = torch::randn({2, 1, 4, 4}).requires_grad_(true);
  const double norm2 = 4 * w.square().sum().item<double>();
  for (int64_t s = 0; s < 5; ++s) {
    f->begin_d_step(s);
    EXPECT_EQ(f->wants_fake_grad(), s % 4 == 0) << "D step " << s;
    EXPECT_FALSE(f->wants_real_grad());
    const torch::Tensor t =
        f->d_loss(DMicroBatch{xr, xf, (xr * w).flatten(1).sum(1), (xf * w * 2).flatten(1).sum(1), 1.0});
    if (s % 4 == 0) EXPECT_NEAR(t.item<double>(), 3.0 / 2 * 4 * norm2, 1e-4 * norm2) << "D step " << s;
    else EXPECT_FALSE(t.defined()) << "D step " << s;
    f->end_d_step(torch::zeros({}), torch::zeros({}), nullptr);
    EXPECT_NEAR(f->stats()[0].item<double>(), norm2, 1e-5 * norm2) << "D step " << s;
  }
}

// R3GAN's objective (RpGAN with R1 and R2 at one gamma), with ADA in front, trains under fp32
// and bf16 autocast: both penalties positive and finite, the double backward through ADA's
// resampling included.
TEST(R2, R3ganObjectiveWithAdaTrains) {
  for (const std::string amp : {"false", "true"}) {
    const Ran r = run(tiny("train.loss=rpgan train.r1_gamma=1 train.r2_gamma=1 train.r1_every=1 train.r2_every=1 "
                           "train.ada=bgc train.ada_p=0.8 train.iterations=2 train.amp=" + amp),
                      fresh_dir("r3gan_" + amp));
    ASSERT_EQ(r.history.size(), 2u) << amp;
    for (const char* k : {"d_r1", "d_r2"}) {
      const float v = r.history[1][stat_index(k)];
      EXPECT_TRUE(std::isfinite(v) && v > 0.f) << k << " " << v << " amp " << amp;
    }
  }
}

TEST(R1, ConfigKeysDefaultOffEvery16AndNameBadValues) {
  EXPECT_EQ(tiny().train.r1_gamma, 0.0);
  EXPECT_EQ(tiny().train.r1_every, 16);
  const Config c = tiny("train.r1_gamma=10 train.r1_every=4");
  EXPECT_EQ(c.train.r1_gamma, 10.0);
  EXPECT_EQ(c.train.r1_every, 4);
  EXPECT_NE(error_of([] { tiny("train.r1_gamma=-1"); }).find("train.r1_gamma"), std::string::npos);
  EXPECT_NE(error_of([] { tiny("train.r1_every=0"); }).find("train.r1_every"), std::string::npos);
  EXPECT_EQ(tiny().train.r2_gamma, 0.0);
  EXPECT_EQ(tiny().train.r2_every, 16);
  EXPECT_NE(error_of([] { tiny("train.r2_gamma=-1"); }).find("train.r2_gamma"), std::string::npos);
  EXPECT_NE(error_of([] { tiny("train.r2_every=0"); }).find("train.r2_every"), std::string::npos);
}

// R1 differentiates D's input gradient again: D trains with it whatever its context module (the
// NMF Hamburger's hand-written CPU backward included, layers/context/nmf_cpu.h), and under bf16
// autocast; the penalty is positive and finite.
TEST(R1, TrainsWithEveryContextModuleInDAndUnderBf16) {
  std::vector<std::string> overrides = {"train.amp=true"};
  for (const std::string& type : context_names())
    if (type != "none") overrides.push_back("discriminator.context.type=" + type);
  for (const std::string& o : overrides) {
    const Ran r = run(tiny("train.r1_gamma=1 train.r1_every=1 train.iterations=1 " + o), fresh_dir("r1_d"));
    ASSERT_EQ(r.history.size(), 1u) << o;
    EXPECT_GT(r.history[0][stat_index("d_r1")], 0.f) << o;
  }
}

namespace {

// Overrides that turn each registered step feature on in the tiny run (n_dis 2, accumulate 2, 6
// iterations, checkpoints at 3 and 6). A new feature adds its line here (the sweep fails naming
// a feature without one).
const std::map<std::string, std::string>& feature_overrides() {
  static const std::map<std::string, std::string> m = {
      {"diffaug", "train.diffaug=color,translation,cutout"},
      {"lecam", "train.lecam_weight=0.3"},
      {"r1", "train.r1_gamma=2 train.r1_every=3"},  // D steps 0, 3, 6, 9: the resumed half starts on one
      {"r2", "train.r2_gamma=2 train.r2_every=3"},
      // p moves by 16 reals / 1000 per interval of 4 D steps: 3, 7, 11; the resume (after D step
      // 5) lands inside an interval, so its running sums must survive the checkpoint.
      {"ada", "train.ada=bgc train.ada_p=0.5 train.ada_kimg=1"},
      {"mode_seeking", "train.mode_seeking=1"},
  };
  return m;
}

std::vector<std::string> feature_names() {
  std::vector<std::string> names;
  for (const StepFeatureEntry& e : step_feature_registry()) names.push_back(e.name);
  return names;
}

const StepFeatureEntry& feature_entry(const std::string& name) {
  for (const StepFeatureEntry& e : step_feature_registry())
    if (e.name == name) return e;
  throw std::logic_error("no step feature " + name);
}

// The same tiny run with no feature on, once for the whole sweep.
const std::string& plain_run() {
  static const std::string dir = [] {
    const std::string d = fresh_dir("feature_plain");
    run(tiny(), d);
    return d;
  }();
  return dir;
}

}  // namespace

class StepFeatureSweep : public ::testing::TestWithParam<std::string> {};

TEST(StepFeatures, NamesStatisticsAndSweepOverridesAreComplete) {
  std::set<std::string> names, keys;
  for (const StatName& s : stat_names()) EXPECT_TRUE(keys.insert(s.key).second) << s.key << " twice";
  for (const StepFeatureEntry& e : step_feature_registry()) {
    EXPECT_TRUE(names.insert(e.name).second) << e.name << " registered twice";
    EXPECT_EQ(feature_overrides().count(e.name), 1u) << e.name << ": add its overrides to feature_overrides()";
    EXPECT_FALSE(e.enabled(tiny().train)) << e.name << " is on by default";
  }
  // metrics.jsonl's keys: the step's five, then ADA's, LeCam's, R1's, R2's and mode seeking's.
  EXPECT_EQ(stat_index("d_loss_real"), 0);
  EXPECT_EQ(stat_index("d_fake"), 4);
  EXPECT_EQ(stat_index("ada_p"), 5);
  EXPECT_EQ(stat_index("ada_rt"), 6);
  EXPECT_EQ(stat_index("d_lecam"), 7);
  EXPECT_EQ(stat_index("d_r1"), 8);
  EXPECT_EQ(stat_index("d_r2"), 9);
  EXPECT_EQ(stat_index("g_ms"), 10);
  EXPECT_NE(error_of([] { stat_index("d_nope"); }).find("d_lecam"), std::string::npos);
}

// N straight equals N/2 + resume + N/2 bit for bit (statistics, D, G and EMA G, the feature's
// checkpointed state); each of its statistics is in every record of metrics.jsonl, non-zero in
// one at least, and 0 in every record of a run without it; D ends elsewhere than without it; a
// fresh Trainer restored from a checkpoint writes the feature's state back unchanged.
TEST_P(StepFeatureSweep, ResumesBitForBitReportsAndCheckpointsItsState) {
  const std::string name = GetParam();
  const StepFeatureEntry& e = feature_entry(name);
  ASSERT_EQ(feature_overrides().count(name), 1u);
  const std::string on = feature_overrides().at(name);
  ASSERT_TRUE(e.enabled(tiny(on).train)) << on;
  const std::string a = fresh_dir("feature_" + name + "_straight"), b = fresh_dir("feature_" + name + "_resumed");
  const Ran straight = run(tiny(on), a);
  const Ran first = run(tiny(on + " train.iterations=3"), b);
  const Ran second = run(tiny(on), b);
  ASSERT_EQ(straight.history.size(), 6u);
  ASSERT_EQ(first.history.size() + second.history.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const IterStats& r = i < 3 ? first.history[i] : second.history[i - 3];
    for (size_t j = 0; j < r.size(); ++j)
      EXPECT_EQ(std::memcmp(&straight.history[i][j], &r[j], sizeof(float)), 0)
          << "iteration " << i + 1 << " " << stat_names()[j].key;
  }
  const Loaded x = load_models(checkpoint_path(a + "/checkpoints", 6));
  const Loaded y = load_models(checkpoint_path(b + "/checkpoints", 6));
  EXPECT_TRUE(identical(x.d, y.d) && identical(x.g, y.g) && identical(x.g_ema, y.g_ema));
  const Loaded plain_models = load_models(checkpoint_path(plain_run() + "/checkpoints", 6));
  bool moved = false;
  for (const auto& [k, v] : x.d) moved = moved || !torch::equal(v, plain_models.d.at(k));
  EXPECT_TRUE(moved) << name << " left D where a run without it ends";

  const auto records = read_train_stats_log(a + "/metrics.jsonl");
  const auto plain = read_train_stats_log(plain_run() + "/metrics.jsonl");
  ASSERT_EQ(records.size(), 6u);
  for (const StatName& s : e.stats) {
    bool nonzero = false;
    for (const auto& rec : records) {
      ASSERT_EQ(rec.count(s.key), 1u) << s.key;
      nonzero = nonzero || rec.at(s.key) != 0;
    }
    EXPECT_TRUE(nonzero) << s.key;
    for (const auto& rec : plain) EXPECT_EQ(rec.at(s.key), 0.0) << s.key;
  }

  // Its state: what the checkpoint holds, restored into a fresh Trainer and written again, and
  // equal between the straight and the resumed run.
  const CheckpointData c = load_checkpoint(checkpoint_path(b + "/checkpoints", 6));
  const CheckpointData cs = load_checkpoint(checkpoint_path(a + "/checkpoints", 6));
  Trainer t(tiny(on), torch::kCPU);
  t.restore(c);
  const CheckpointWrite w = t.checkpoint(c.loader, /*standing=*/false);
  const auto names = e.create(tiny(on), torch::kCPU)->state();
  for (const auto& [state, fresh] : names) {
    const auto stored = c.find_train_state(state), stored_straight = cs.find_train_state(state);
    ASSERT_TRUE(stored && stored_straight) << state << " not in the checkpoint";
    EXPECT_TRUE(torch::equal(*stored, *stored_straight)) << state;
    EXPECT_FALSE(torch::equal(*stored, fresh.cpu())) << state << " never left its initial value";
    bool written = false;
    for (const auto& [n, v] : w.train_state) {
      if (n != state) continue;
      written = true;
      EXPECT_TRUE(torch::equal(v.cpu(), *stored)) << state;
    }
    EXPECT_TRUE(written) << state;
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, StepFeatureSweep, ::testing::ValuesIn(feature_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace test_d_regularisers
