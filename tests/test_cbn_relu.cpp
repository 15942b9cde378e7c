// The fused conditional BN + ReLU (layers/cbn_relu) against the plain chain written with
// torch's own BatchNorm2d and autograd: relu(bn(x) * gain1 + bias). In double the two agree to
// round-off in outputs, the three gradients and the running statistics, in both memory formats
// and both modes; a finite-difference gradcheck covers the analytic backward; bf16 stays within
// one rounding of the exact result; G's blocks take the fused form only where the policy says.
#include <gtest/gtest.h>

#include <optional>

#include "core/error.h"
#include "gan/config/config.h"
#include "gan/models/generator.h"
#include "layers/cbn_relu.h"
#include "support/gradcheck.h"
#include "support/kernel_scopes.h"

namespace test_cbn_relu {

using namespace hamgan;
using namespace hamgan::test;

namespace {

struct Case {
  torch::Tensor x, gain1, bias, upstream;
};

Case make_case(torch::MemoryFormat format, torch::Dtype dtype = torch::kDouble) {
  torch::manual_seed(3);
  Case k;
  const auto o = torch::TensorOptions().dtype(torch::kDouble);
  k.x = (torch::randn({4, 6, 5, 3}, o) * 2 + 0.5).to(dtype).contiguous(format);
  k.gain1 = 1 + 0.4 * torch::randn({4, 6}, o);
  k.bias = 0.5 * torch::randn({4, 6}, o);
  k.upstream = torch::randn({4, 6, 5, 3}, o).contiguous(format);
  return k;
}

torch::nn::BatchNorm2d make_bn(int64_t c, bool training) {
  torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(c).affine(false));
  bn->to(torch::kDouble);
  torch::NoGradGuard ng;
  bn->running_mean.uniform_(-0.5, 0.5);
  bn->running_var.uniform_(0.5, 2.0);
  bn->train(training);
  return bn;
}

struct Result {
  torch::Tensor y, dx, dgain1, dbias;
};

Result run(const Case& k, const std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&,
                                                            const torch::Tensor&)>& f) {
  torch::Tensor x = k.x.detach().clone().requires_grad_(true);
  torch::Tensor g1 = k.gain1.detach().clone().requires_grad_(true);
  torch::Tensor b = k.bias.detach().clone().requires_grad_(true);
  torch::Tensor y = f(x, g1, b);
  (y.to(torch::kDouble) * k.upstream).sum().backward();
  return {y.detach(), x.grad(), g1.grad(), b.grad()};
}

torch::Tensor plain(torch::nn::BatchNorm2d& bn, const torch::Tensor& x, const torch::Tensor& g1,
                    const torch::Tensor& b) {
  const auto n = x.size(0), c = x.size(1);
  return torch::relu(bn->forward(x) * g1.view({n, c, 1, 1}) + b.view({n, c, 1, 1}));
}

double max_abs(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

}  // namespace

class CbnReluModes : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

// Double, so the two differ only by summation order: 1e-12 absolute on values of order 1-10.
TEST_P(CbnReluModes, EqualsThePlainChainInDouble) {
  const auto [channels_last, training] = GetParam();
  const Case k = make_case(channels_last ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous);
  auto bn_plain = make_bn(6, training), bn_fused = make_bn(6, training);
  {
    torch::NoGradGuard ng;
    bn_fused->running_mean.copy_(bn_plain->running_mean);
    bn_fused->running_var.copy_(bn_plain->running_var);
  }
  const Result p = run(k, [&](auto& x, auto& g1, auto& b) { return plain(bn_plain, x, g1, b); });
  const Result f = run(k, [&](auto& x, auto& g1, auto& b) { return cbn_relu(*bn_fused, x, g1, b); });
  EXPECT_LT(max_abs(f.y, p.y), 1e-12);
  EXPECT_LT(max_abs(f.dx, p.dx), 1e-12);
  EXPECT_LT(max_abs(f.dgain1, p.dgain1), 1e-12);
  EXPECT_LT(max_abs(f.dbias, p.dbias), 1e-12);
  EXPECT_GT(p.y.eq(0).sum().item<int64_t>(), 0) << "the case should rectify some values";
  EXPECT_EQ(f.y.is_contiguous(torch::MemoryFormat::ChannelsLast), channels_last);
  EXPECT_LT(max_abs(bn_fused->running_mean, bn_plain->running_mean), 1e-14);
  EXPECT_LT(max_abs(bn_fused->running_var, bn_plain->running_var), 1e-14);
  EXPECT_EQ(bn_fused->num_batches_tracked.item<int64_t>(), bn_plain->num_batches_tracked.item<int64_t>());
}

INSTANTIATE_TEST_SUITE_P(LayoutAndMode, CbnReluModes,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "ChannelsLast" : "Nchw") +
                                  (std::get<1>(info.param) ? "Train" : "Eval");
                         });

// The analytic backward (BN through its batch statistics) against finite differences. Batch
// statistics are deterministic, so training mode qualifies; the running averages are restored
// so every evaluation sees the same module.
TEST(CbnRelu, GradcheckDouble) {
  for (const bool training : {true, false}) {
    const Case k = make_case(torch::MemoryFormat::Contiguous);
    auto bn = make_bn(6, training);
    const torch::Tensor rm = bn->running_mean.clone(), rv = bn->running_var.clone();
    torch::Tensor x = k.x.detach().clone().requires_grad_(true);
    torch::Tensor g1 = k.gain1.detach().clone().requires_grad_(true);
    torch::Tensor b = k.bias.detach().clone().requires_grad_(true);
    EXPECT_TRUE(test::gradcheck(
        [&] {
          torch::Tensor y = cbn_relu(*bn, x, g1, b);
          torch::NoGradGuard ng;
          bn->running_mean.copy_(rm);
          bn->running_var.copy_(rv);
          return y;
        },
        {x, g1, b}))
        << (training ? "training" : "eval");
  }
}

// bf16 activations: the fused form rounds once, so each output is within half a bf16 ulp
// (2^-8 relative: 8 significant bits) of the exact value, plus the fp32 statistics' own error.
TEST(CbnRelu, Bf16WithinOneRoundingOfTheExactResult) {
  const Case k = make_case(torch::MemoryFormat::ChannelsLast, torch::kBFloat16);
  auto bn_exact = make_bn(6, true), bn_bf16 = make_bn(6, true);
  torch::Tensor exact;
  {
    torch::NoGradGuard ng;
    exact = plain(bn_exact, k.x.to(torch::kDouble), k.gain1, k.bias);
  }
  const torch::Tensor y = cbn_relu(*bn_bf16, k.x, k.gain1.to(torch::kFloat), k.bias.to(torch::kFloat));
  ASSERT_EQ(y.scalar_type(), torch::kBFloat16);
  const torch::Tensor err = (y.to(torch::kDouble) - exact).abs();
  const torch::Tensor bound = exact.abs() * std::ldexp(1.0, -8) + 1e-5;
  EXPECT_TRUE(err.le(bound).all().item<bool>()) << "worst excess " << (err - bound).max().item<double>();
}

TEST(CbnRelu, RefusesGainsOfAnotherShape) {
  auto bn = make_bn(6, true);
  const Case k = make_case(torch::MemoryFormat::Contiguous);
  try {
    cbn_relu(*bn, k.x, k.gain1.narrow(1, 0, 5), k.bias);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected gain and bias of [4, 6]"), std::string::npos) << e.what();
  }
}

TEST(CbnRelu, PolicyDecidesWhereTheFusedFormRuns) {
  std::optional<KernelScope> scope;  // the layer forms this test puts in force
  const torch::Tensor x = torch::zeros({2, 3, 4, 4});
  scope.reset();
  EXPECT_FALSE(fused_cbn_relu_pays(x));  // the CPU: not measured faster there
  scope.emplace(only_cbn_relu(FusePolicy::Always));
  EXPECT_TRUE(fused_cbn_relu_pays(x));
  scope.emplace(only_cbn_relu(FusePolicy::Never));
  EXPECT_FALSE(fused_cbn_relu_pays(x));
  scope.reset();
}

// A whole G in double, both with labels (per-class gains) and BigGAN's hierarchical vector
// condition: fused and plain give the same images and gradients, in training and eval mode.
TEST(CbnRelu, GeneratorFusedEqualsPlain) {
  std::optional<KernelScope> scope;  // the layer forms this test puts in force
  for (const bool hier : {false, true}) {
    Config cfg = parse_config(std::string("model: {resolution: 32, n_classes: 3, image_channels: 3}\n"
                                          "generator: {ch: 4, z_dim: 16, context: {type: none}") +
                                  (hier ? ", shared_dim: 8, hier: true}\n" : "}\n"),
                              "cbn test config");
    for (const bool training : {true, false}) {
      std::vector<torch::Tensor> out, grads;
      for (const FusePolicy p : {FusePolicy::Never, FusePolicy::Always}) {
        scope.emplace(only_cbn_relu(p));
        torch::manual_seed(5);
        Generator g(cfg.model, cfg.generator);
        g->to(torch::kDouble);
        g->train(training);
        const torch::Tensor z = torch::randn({4, 16}, torch::kDouble);
        const torch::Tensor y = torch::tensor({0, 2, 1, 2}, torch::kLong);
        const torch::Tensor img = g->forward(z, y);
        (img * img).sum().backward();
        out.push_back(img.detach());
        std::vector<torch::Tensor> gs;
        for (const auto& q : g->parameters())
          if (q.grad().defined()) gs.push_back(q.grad().reshape({-1}));
        grads.push_back(torch::cat(gs));
      }
      scope.reset();
      EXPECT_LT(max_abs(out[0], out[1]), 1e-12) << "hier " << hier << " training " << training;
      EXPECT_LT(max_abs(grads[0], grads[1]), 1e-10) << "hier " << hier << " training " << training;
    }
  }
}

}  // namespace test_cbn_relu
