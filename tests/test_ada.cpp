// Adaptive discriminator augmentation (gan/train/ada_augment.h, gan/train/ada.h) against the
// reference written from the pipeline's equations with explicit index arithmetic
// (tests/oracle/ada.py: its own reflection padding, filters and bilinear sampling), in float64
// with the draws fixed: every group alone and together, RGB and gray, odd sizes, values and
// gradients; gradcheck in double; the draws' ranges; p's heuristic; the config keys; data.limit,
// the class-balanced subset the small-data runs train on; init_from carrying p. The resume bit
// for bit and the checkpointed state are the step-feature sweep's (test_d_regularisers.cpp).
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "core/state_dict.h"
#include "gan/data/dataset.h"
#include "gan/data/subset.h"
#include "gan/train/ada.h"
#include "gan/train/ada_augment.h"
#include "support/errors.h"
#include "support/gradcheck.h"
#include "support/image_folder.h"
#include "support/oracle.h"
#include "support/tiny_run.h"

namespace test_ada {

using namespace hamgan;
using namespace hamgan::test;

namespace {

struct Case {
  const char* name;
  AdaPolicy policy;
};
const Case kCases[] = {{"rgb_bgc", {true, true, true}}, {"gray32_bgc", {true, true, true}},
                       {"rgb_b", {true, false, false}}, {"rgb_g", {false, true, false}},
                       {"rgb_c", {false, false, true}}, {"gray_c", {false, false, true}},
                       {"p0", {true, true, true}}};

AdaDraws draws_of(const TensorMap& d, const std::string& c) {
  AdaDraws a;
  for (const auto& [name, field] : ada_draw_fields()) a.*field = get(d, c + "." + name);
  return a;
}

double p_of(const TensorMap& d, const std::string& c) { return get(d, c + ".p").item<double>(); }

}  // namespace

// Both sides in float64 with the same draws. Each output pixel is a sum of 12 x 12 x 4 x 12 x 12
// filter-weighted terms of magnitude <= ~5 (the padded, upsampled image): 1e-10 absolute is
// rounding with room, and far below any misplaced tap (~1e-3).
TEST(Ada, MatchesTheReferenceForwardAndBackward) {
  const TensorMap d = load_tensors(oracle_path("ada.pt"));
  for (const Case& c : kCases) {
    const torch::Tensor x0 = get(d, std::string(c.name) + ".x"), r = get(d, std::string(c.name) + ".r");
    const AdaDraws dr = draws_of(d, c.name);
    for (const bool nhwc : {false, true}) {  // D's input is channels-last in training
      torch::Tensor x = x0.clone();
      if (nhwc) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
      x.requires_grad_(true);
      const torch::Tensor y = ada_augment(x, c.policy, p_of(d, c.name), dr);
      EXPECT_TRUE(close(y, get(d, std::string(c.name) + ".y"), 1e-10, 1e-10)) << c.name << (nhwc ? " NHWC" : "");
      (y * r).sum().backward();
      EXPECT_TRUE(close(x.grad(), get(d, std::string(c.name) + ".grad"), 1e-10, 1e-10))
          << c.name << (nhwc ? " NHWC" : "");
    }
  }
}

// The composed matrices themselves: rotations by multiples of pi/2 leave ~1e-16 where an exact
// 0 would be, so 1e-14 absolute.
TEST(Ada, GeometricAndColourMatricesMatchTheReference) {
  const TensorMap d = load_tensors(oracle_path("ada.pt"));
  const AdaDraws dr = draws_of(d, "rgb_bgc");
  const AdaPolicy all{true, true, true};
  const torch::Tensor x = get(d, "rgb_bgc.x");
  EXPECT_TRUE(close(ada_geometric_matrix(all, p_of(d, "rgb_bgc"), dr, x.size(2), x.size(3)), get(d, "rgb_bgc.G_inv"),
                    1e-14, 1e-14));
  EXPECT_TRUE(close(ada_color_matrix(all, p_of(d, "rgb_bgc"), dr, 3), get(d, "rgb_bgc.C"), 1e-14, 1e-14));
}

// An image with every gate shut comes back bit for bit (image 1 of each case with p < 1), and
// p = 0 is exactly no augmentation; so is an image whose gates opened on identity values.
TEST(Ada, UntouchedImagesAndPZeroAreExact) {
  const TensorMap d = load_tensors(oracle_path("ada.pt"));
  for (const Case& c : kCases) {
    if (p_of(d, c.name) >= 0.999) continue;
    const torch::Tensor x = get(d, std::string(c.name) + ".x");
    const torch::Tensor y = ada_augment(x, c.policy, p_of(d, c.name), draws_of(d, c.name));
    EXPECT_TRUE(torch::equal(y[1], x[1])) << c.name;
  }
  const torch::Tensor x = get(d, "p0.x");
  EXPECT_TRUE(torch::equal(ada_augment(x, {true, true, true}, 0.0, draws_of(d, "p0")), x));
  const torch::Tensor xb = get(d, "rgb_b.x");
  EXPECT_TRUE(torch::equal(ada_augment(xb, {true, false, false}, p_of(d, "rgb_b"), draws_of(d, "rgb_b"))[2], xb[2]));
}

// Finite differences in double through each group and the whole pipeline (the draws fixed), and
// the input gradient differentiated again (R1 and R2 through ADA): the resampling is gathers
// and convolutions, so its backward has a backward.
TEST(Ada, GradcheckInDoubleAndTwiceDifferentiable) {
  const TensorMap d = load_tensors(oracle_path("ada.pt"));
  for (const char* c : {"rgb_g", "rgb_b", "gray_c", "rgb_c"}) {
    const torch::Tensor x = get(d, std::string(c) + ".x").clone().requires_grad_(true);
    const AdaDraws dr = draws_of(d, c);
    const AdaPolicy all{true, true, true};
    EXPECT_TRUE(gradcheck([&] { return ada_augment(x, all, p_of(d, c), dr); }, {x})) << c;
  }
  const torch::Tensor x = get(d, "rgb_bgc.x").clone().requires_grad_(true);
  torch::manual_seed(3);
  const torch::Tensor w = torch::randn_like(x);
  const AdaDraws dr = draws_of(d, "rgb_bgc");
  // A D of one weighted square: the penalty ||grad_x (sum_i T(x)_i^2 w_i)||^2 has a gradient in x.
  const auto penalty = [&] {
    const torch::AutoGradMode on(true);
    const torch::Tensor y = ada_augment(x, {true, true, true}, 0.7, dr);
    const torch::Tensor g = torch::autograd::grad({(y.square() * w).sum()}, {x}, {}, true, true)[0];
    return g.square().sum();
  };
  const torch::Tensor p = penalty();
  const torch::Tensor g2 = torch::autograd::grad({p}, {x})[0];
  EXPECT_GT(g2.abs().max().item<double>(), 0.0);
  // The penalty is a polynomial of degree 4 in x (T is linear in x, the draws fixed), for which
  // the check's Richardson extrapolation of central differences is exact: a step of 1e-3 leaves
  // only round-off, ~|penalty| 1e-16 / 1e-3 (at 1e-5 that noise reached the check's 1e-7).
  EXPECT_TRUE(gradcheck(penalty, {x}, 1e-3));
}

// The draws: gates in [0, 1), flips and luma flips 0 or 1, quarter turns 0..3, integer
// translations within 1/8, the rotations' t in [-1, 1); a group left out draws nothing.
TEST(Ada, DrawsCoverThePapersRangesAndOnlyTheGroupsOn) {
  at::Generator g = at::detail::createCPUGenerator(11);
  const AdaDraws d = draw_ada({true, true, true}, 4000, g);
  for (const auto& [name, field] : ada_draw_fields()) {
    const torch::Tensor t = d.*field;
    ASSERT_TRUE(t.defined()) << name;
    EXPECT_EQ(t.scalar_type(), torch::kDouble) << name;
    const std::string n = name;
    if (n.size() > 2 && n.substr(n.size() - 2) == "_u") {
      EXPECT_GE(t.min().item<double>(), 0.0) << n;
      EXPECT_LT(t.max().item<double>(), 1.0) << n;
    }
  }
  EXPECT_TRUE(torch::equal(std::get<0>(torch::_unique(d.xflip_i)), torch::tensor({0., 1.}, torch::kDouble)));
  EXPECT_TRUE(torch::equal(std::get<0>(torch::_unique(d.rot90_i)), torch::tensor({0., 1., 2., 3.}, torch::kDouble)));
  EXPECT_TRUE(torch::equal(std::get<0>(torch::_unique(d.lumaflip_i)), torch::tensor({0., 1.}, torch::kDouble)));
  EXPECT_GE(d.xint_t.min().item<double>(), -0.125);
  EXPECT_LT(d.xint_t.max().item<double>(), 0.125);
  EXPECT_GE(d.rot_pre_t.min().item<double>(), -1.0);
  EXPECT_LT(d.hue_t.max().item<double>(), 1.0);
  EXPECT_NEAR(d.scale_n.std().item<double>(), 1.0, 0.05);
  const AdaDraws colour = draw_ada({false, false, true}, 3, g);
  EXPECT_FALSE(colour.xflip_u.defined() || colour.scale_u.defined());
  EXPECT_TRUE(colour.hue_u.defined());
}

// p's heuristic: every interval (2 D steps here), p moves by the interval's reals over
// ada_kimg x 1000 toward r_t = target, within [0, 1]; with ada_target 0 it stays at ada_p.
TEST(Ada, PFollowsTheSignOfDsOutputsOnRealsTowardTheTarget) {
  const auto f = make_ada_feature(tiny("train.ada=bgc train.ada_p=0.1 train.ada_interval=2 train.ada_kimg=0.008"),
                                  torch::kCPU);  // 2 D steps x 2 micro-batches x 2 reals = 8: p moves by 1
  const auto step = [&](int64_t s, const torch::Tensor& o) {
    f->begin_d_step(s);
    for (int micro = 0; micro < 2; ++micro) EXPECT_FALSE(f->d_loss(DMicroBatch{{}, {}, o, o, 0.5}).defined());
    f->end_d_step(torch::zeros({}), torch::zeros({}), nullptr);
    return std::make_pair(f->stats()[0].item<double>(), f->stats()[1].item<double>());
  };
  const torch::Tensor sure = torch::tensor({1.5f, 0.2f}), unsure = torch::tensor({1.5f, -0.2f});
  EXPECT_EQ(step(0, sure), std::make_pair(0.1f * 1.0, 0.0));  // mid-interval: unchanged
  auto [p, rt] = step(1, sure);
  EXPECT_DOUBLE_EQ(rt, 1.0);
  EXPECT_FLOAT_EQ(p, 1.0f);  // 0.1 + 1, clamped
  step(2, unsure);
  std::tie(p, rt) = step(3, unsure);
  EXPECT_DOUBLE_EQ(rt, 0.0);
  EXPECT_FLOAT_EQ(p, 0.0f);
  const auto fixed = make_ada_feature(tiny("train.ada=bgc train.ada_p=0.3 train.ada_target=0 train.ada_interval=1"),
                                      torch::kCPU);
  fixed->begin_d_step(0);
  fixed->d_loss(DMicroBatch{{}, {}, sure, sure, 1.0});
  fixed->end_d_step(torch::zeros({}), torch::zeros({}), nullptr);
  EXPECT_FLOAT_EQ(fixed->stats()[0].item<float>(), 0.3f);
  EXPECT_FLOAT_EQ(fixed->stats()[1].item<float>(), 1.0f);  // r_t is still reported
  // The relativistic loss: r_t of the pairs' differences, whatever offset D's outputs carry.
  const auto rp = make_ada_feature(tiny("train.ada=bgc train.loss=rpgan train.ada_interval=1"), torch::kCPU);
  rp->begin_d_step(0);
  rp->d_loss(DMicroBatch{{}, {}, torch::tensor({5.0f, 6.0f}), torch::tensor({5.5f, 4.0f}), 1.0});
  rp->end_d_step(torch::zeros({}), torch::zeros({}), nullptr);
  EXPECT_FLOAT_EQ(rp->stats()[1].item<float>(), 0.0f);  // one pair each way, though every D(x) > 0
}

TEST(Ada, ConfigKeysReadTheGroupsAndNameBadValues) {
  EXPECT_FALSE(tiny().train.ada.any());
  EXPECT_EQ(tiny().train.ada_target, 0.6);
  EXPECT_EQ(tiny().train.ada_interval, 4);
  EXPECT_EQ(tiny().train.ada_kimg, 500.0);
  const AdaPolicy p = tiny("train.ada=bc").train.ada;
  EXPECT_TRUE(p.blit && !p.geom && p.color);
  for (const char* bad : {"train.ada=gb", "train.ada=bgcx", "train.ada=bb", "train.ada=BGC"}) {
    const std::string e = error_of([&] { tiny(bad); });
    EXPECT_NE(e.find("train.ada"), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find("bgc"), std::string::npos) << bad << ": " << e;
  }
  for (const char* bad : {"train.ada_p=1.5", "train.ada_target=-0.1", "train.ada_interval=0", "train.ada_kimg=0"})
    EXPECT_NE(error_of([&] { tiny(bad); }).find(std::string(bad).substr(0, std::string(bad).find('='))),
              std::string::npos)
        << bad;
}

// A fine-tuning run starts from the source run's p with train.init_ada_p, else from ada_p.
TEST(Ada, InitFromCarriesPWhenAsked) {
  const std::string on = "train.ada=bgc train.ada_p=0.5 train.ada_kimg=1 train.ada_interval=2";
  const std::string src = fresh_dir("ada_source");
  run(tiny(on + " train.iterations=4"), src);
  const CheckpointData c = load_checkpoint(checkpoint_path(src + "/checkpoints", 4));
  const double p = c.find_train_state("ada")->cpu()[0].item<double>();
  ASSERT_NE(p, 0.5);
  const std::string init = " train.iterations=1 train.init_from=" + checkpoint_path(src + "/checkpoints", 4);
  // An interval longer than the run: the reported p is where it started.
  const Ran carried = run(tiny(on + init + " train.init_ada_p=true train.ada_interval=100"), fresh_dir("ada_carried"));
  const Ran fresh = run(tiny(on + init + " train.ada_interval=100"), fresh_dir("ada_fresh"));
  EXPECT_FLOAT_EQ(carried.history[0][stat_index("ada_p")], static_cast<float>(p));
  EXPECT_FLOAT_EQ(fresh.history[0][stat_index("ada_p")], 0.5f);
}

// data.limit: a class-balanced subset of the source (classes take turns), the smaller limit's
// images among the larger's; past the source's size, an error naming the key.
TEST(DataLimit, AClassBalancedNestedSubsetOrANamedError) {
  const std::string dir = image_folder(fresh_dir("limit_folder"), 5, 0);  // classes a and b
  DataConfig dc;
  dc.format = DataFormat::Folder;
  dc.path = dir;
  const auto all = open_dataset(dc, 32, 3);
  dc.limit = 4;
  const auto four = open_dataset(dc, 32, 3);
  dc.limit = 2;
  const auto two = open_dataset(dc, 32, 3);
  ASSERT_EQ(four->size(), 4);
  ASSERT_EQ(two->size(), 2);
  std::map<int32_t, int> per_class;
  for (int64_t i = 0; i < four->size(); ++i) ++per_class[four->label(i)];
  EXPECT_EQ(per_class, (std::map<int32_t, int>{{0, 2}, {1, 2}}));
  EXPECT_NE(two->label(0), two->label(1));
  EXPECT_EQ(all->size(), 10);
  // The subsets data.limit takes (seed 0) are nested: 1,000 of Fashion-MNIST's are among its 5,000.
  const auto label = [](int64_t i) { return static_cast<int32_t>(i % 10); };
  const Subset small = choose_subset(60000, label, 1000, 0), large = choose_subset(60000, label, 5000, 0);
  EXPECT_TRUE(std::includes(large.indices.begin(), large.indices.end(), small.indices.begin(), small.indices.end()));
  dc.limit = 11;
  const std::string e = error_of([&] { open_dataset(dc, 32, 3); });
  EXPECT_NE(e.find("data.limit 11"), std::string::npos) << e;
  EXPECT_NE(e.find("only 10"), std::string::npos) << e;
}

}  // namespace test_ada
