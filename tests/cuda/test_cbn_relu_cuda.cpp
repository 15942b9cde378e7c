// The fused conditional BN + ReLU's CUDA kernels (layers/cbn_relu_cuda.cu) against its ATen
// form on the CPU (tests/test_cbn_relu.cpp checks that against torch's BatchNorm2d): in double
// the two agree to round-off in outputs, gradients and running statistics, in both memory
// formats and modes, on shapes whose channels do not fill the kernels' 32-wide tiles; in bf16
// each output is within one rounding of the exact value. Needs a GPU.
#include <gtest/gtest.h>

#include <optional>

#include "layers/cbn_relu.h"

#include "support/kernel_scopes.h"

using namespace hamgan;
using namespace hamgan::test;

namespace {

const torch::Device kGpu(torch::kCUDA, 0);

struct Out {
  torch::Tensor y, dx, dgain1, dbias, running_mean, running_var;
};

Out run(const torch::Device& device, torch::Dtype dtype, torch::MemoryFormat format, bool training,
        std::vector<int64_t> shape) {
  torch::manual_seed(11);
  const auto o = torch::TensorOptions().dtype(torch::kDouble);
  const int64_t n = shape[0], c = shape[1];
  // bf16-representable inputs, so a bf16 run and the double one see the same x
  const torch::Tensor x0 = (torch::randn(shape, o) * 1.5 + 0.3).to(torch::kBFloat16).to(torch::kDouble);
  const torch::Tensor g0 = 1 + 0.4 * torch::randn({n, c}, o), b0 = 0.5 * torch::randn({n, c}, o);
  const torch::Tensor up = torch::randn(shape, o);
  torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(c).affine(false));
  {
    torch::NoGradGuard ng;
    bn->running_mean.uniform_(-0.5, 0.5);
    bn->running_var.uniform_(0.5, 2.0);
  }
  bn->to(device, dtype == torch::kDouble ? torch::kDouble : torch::kFloat);
  bn->train(training);
  const auto acc = dtype == torch::kDouble ? torch::kDouble : torch::kFloat;
  torch::Tensor x = x0.to(device, dtype).contiguous(format).requires_grad_(true);
  torch::Tensor g1 = g0.to(device, acc).requires_grad_(true), b = b0.to(device, acc).requires_grad_(true);
  const torch::Tensor y = cbn_relu(*bn, x, g1, b);
  (y.to(torch::kDouble) * up.to(device)).sum().backward();
  return {y.detach().cpu(), x.grad().cpu(), g1.grad().cpu(), b.grad().cpu(), bn->running_mean.cpu(),
          bn->running_var.cpu()};
}

double max_abs(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

}  // namespace

TEST(CbnReluCuda, TheKernelsAreBuiltAndRunWhenSwitchedOn) {
  std::optional<KernelScope> scope;  // the layer forms this test puts in force
  ASSERT_TRUE(cuda_kernels_built());
  scope.emplace(only_cbn_relu(FusePolicy::Always));
  EXPECT_TRUE(fused_cbn_relu_pays(torch::zeros({2, 3, 4, 4}, kGpu)));
  scope.reset();
}

TEST(CbnReluCuda, KernelsEqualTheAtenFormInDouble) {
  for (const auto format : {torch::MemoryFormat::Contiguous, torch::MemoryFormat::ChannelsLast})
    for (const bool training : {true, false})
      for (const auto& shape : {std::vector<int64_t>{4, 6, 5, 3}, std::vector<int64_t>{64, 40, 16, 16}}) {
        const Out cpu = run(torch::kCPU, torch::kDouble, format, training, shape);
        const Out gpu = run(kGpu, torch::kDouble, format, training, shape);
        const std::string what = std::string(format == torch::MemoryFormat::ChannelsLast ? "NHWC" : "NCHW") +
                                 (training ? " train " : " eval ") + std::to_string(shape[0]);
        EXPECT_LT(max_abs(gpu.y, cpu.y), 1e-12) << what;
        EXPECT_LT(max_abs(gpu.dx, cpu.dx), 1e-11) << what;
        EXPECT_LT(max_abs(gpu.dgain1, cpu.dgain1), 1e-9) << what;  // sums of up to 256 x 64 terms
        EXPECT_LT(max_abs(gpu.dbias, cpu.dbias), 1e-9) << what;
        EXPECT_LT(max_abs(gpu.running_mean, cpu.running_mean), 1e-12) << what;
        EXPECT_LT(max_abs(gpu.running_var, cpu.running_var), 1e-12) << what;
      }
}

// bf16 on the GPU: within one rounding (2^-8 relative) of the double result, plus the fp32
// statistics' error.
TEST(CbnReluCuda, Bf16WithinOneRoundingOfDouble) {
  const std::vector<int64_t> shape{64, 40, 16, 16};
  const Out exact = run(kGpu, torch::kDouble, torch::MemoryFormat::ChannelsLast, true, shape);
  const Out bf16 = run(kGpu, torch::kBFloat16, torch::MemoryFormat::ChannelsLast, true, shape);
  const torch::Tensor err = (bf16.y.to(torch::kDouble) - exact.y).abs();
  const torch::Tensor bound = exact.y.abs() * std::ldexp(1.0, -8) + 1e-5;
  EXPECT_TRUE(err.le(bound).all().item<bool>()) << "worst excess " << (err - bound).max().item<double>();
  // The input gradient from a bf16 upstream gradient and fp32 arithmetic: 2^-7 of its scale,
  // except where the two runs rectify differently (|pre-activation| below fp32's resolution of
  // the statistics: a handful of the 655,360 elements at most).
  const torch::Tensor same = bf16.y.eq(0).eq(exact.y.eq(0));
  EXPECT_LT((~same).sum().item<int64_t>(), 10);
  const double scale = exact.dx.abs().max().item<double>();
  const torch::Tensor dx_err = (bf16.dx.to(torch::kDouble) - exact.dx).abs() * same;
  EXPECT_LT(dx_err.max().item<double>(), scale * std::ldexp(1.0, -7));
}
