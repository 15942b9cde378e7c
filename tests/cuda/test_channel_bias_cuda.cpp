// The bias add's CUDA kernel (layers/channel_bias_cuda.cu) against its ATen form on the CPU
// (tests/test_layers.cpp checks that against torch::conv2d's bias): both add in the
// accumulation type and round once, so they agree bit for bit, in double, fp32 and bf16, both
// memory formats, on the 16-byte vector path (channels or pixels a multiple of the pack) and the
// scalar one (neither, or a misaligned start), with and without the ReLU of D's first
// convolution; the gradients are the ATen form's. Needs a GPU.
#include <gtest/gtest.h>

#include <optional>

#include "core/compat.h"
#include "layers/channel_bias.h"

#include "support/kernel_scopes.h"

using namespace hamgan;
using namespace hamgan::test;

namespace {

const torch::Device kGpu(torch::kCUDA, 0);

// y (N x C x H x W) in `format`, starting `offset` elements into its storage.
torch::Tensor make_y(const std::vector<int64_t>& shape, torch::Dtype dtype, torch::MemoryFormat format,
                     int64_t offset, const torch::Device& device) {
  const int64_t numel = shape[0] * shape[1] * shape[2] * shape[3];
  const torch::Tensor values = torch::randn(shape, torch::kDouble).contiguous(format);
  torch::Tensor store = torch::full({numel + offset}, std::nan(""), torch::TensorOptions().dtype(dtype).device(device));
  const std::vector<int64_t> strides(values.strides().begin(), values.strides().end());
  torch::Tensor y = store.as_strided(shape, strides, offset);
  y.copy_(values);
  return y;
}

struct Out {
  torch::Tensor out, dy, db;
};

Out run(const torch::Tensor& y0, const torch::Tensor& b0, bool relu, const torch::Device& device) {
  torch::Tensor y = y0.to(device).detach().requires_grad_(true);
  if (device.is_cuda() && y0.is_cuda()) y = y0.detach().requires_grad_(true);  // keep its storage offset
  torch::Tensor b = b0.to(device).detach().requires_grad_(true);
  const torch::Tensor out = relu ? add_channel_bias_relu(y, b) : add_channel_bias(y, b);
  const torch::Tensor up = torch::linspace(-1, 1, out.numel(), torch::kDouble).view(out.sizes()).to(device);
  (out.to(torch::kDouble) * up).sum().backward();
  return {out.detach().cpu(), y.grad().cpu(), b.grad().cpu()};
}

}  // namespace

TEST(ChannelBiasCuda, KernelEqualsTheAtenFormBitForBit) {
  torch::manual_seed(31);
  struct Case {
    std::vector<int64_t> shape;
    int64_t offset;
  };
  // [2, 16, 4, 4]: 16 channels and 16 pixels fill the packs of every dtype (vector path); [3, 5, 3, 5]:
  // neither (scalar); offset 1: a misaligned start (scalar)
  const std::vector<Case> cases = {{{2, 16, 4, 4}, 0}, {{3, 5, 3, 5}, 0}, {{2, 16, 4, 4}, 1}};
  for (const auto dtype : {torch::kDouble, torch::kFloat, torch::kBFloat16, torch::kHalf})
    for (const auto format : {torch::MemoryFormat::Contiguous, torch::MemoryFormat::ChannelsLast})
      for (const auto& c : cases)
        for (const bool relu : {false, true}) {
          SCOPED_TRACE(testing::Message() << dtype << " " << format << " " << c.shape << " offset " << c.offset
                                          << (relu ? " relu" : ""));
          const auto bdtype = dtype == torch::kDouble ? torch::kDouble : torch::kFloat;
          const torch::Tensor b = torch::randn({c.shape[1]}, torch::kDouble).to(bdtype);
          const torch::Tensor yg = make_y(c.shape, dtype, format, c.offset, kGpu);
          const Out want = run(yg.cpu(), b, relu, torch::kCPU);
          const Out got = run(yg, b, relu, kGpu);
          if (relu) {
            EXPECT_GT((got.out == 0).sum().item<int64_t>(), 0) << "the ReLU clipped";
          }
          EXPECT_FALSE(got.out.isnan().any().item<bool>()) << "every element written";
          EXPECT_TRUE(torch::equal(got.out, want.out)) << (got.out.to(torch::kDouble) - want.out.to(torch::kDouble)).abs().max();
          EXPECT_EQ(got.out.is_contiguous(torch::MemoryFormat::ChannelsLast),
                    format == torch::MemoryFormat::ChannelsLast);
          EXPECT_TRUE(torch::equal(got.dy, want.dy));
          EXPECT_TRUE(torch::allclose(got.db.to(torch::kDouble), want.db.to(torch::kDouble), 1e-5, 1e-5))
              << "a sum over n, h, w in another order";
        }
}

// A convolution with the kernel's bias against torch::conv2d's own, under bf16 autocast and
// channels-last as training runs: they differ by the bias's rounding to bf16 in the plain form
// (at most half a bf16 ulp of |b|) plus one rounding of the sum.
TEST(ChannelBiasCuda, ConvUnderAutocastWithinOneBf16Rounding) {
  std::optional<KernelScope> scope;  // the layer forms this test puts in force
  ASSERT_TRUE(bias_kernel_pays(torch::zeros({1}, kGpu)));
  torch::manual_seed(32);
  const torch::Tensor x = torch::randn({8, 32, 16, 16}, kGpu).contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor w = torch::randn({64, 32, 3, 3}, kGpu).contiguous(torch::MemoryFormat::ChannelsLast) * 0.05;
  const torch::Tensor b = torch::randn({64}, kGpu);
  for (const bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "conv2d_bias_relu" : "conv2d_bias");
    const auto conv = relu ? conv2d_bias_relu : conv2d_bias;
    torch::Tensor plain, added;
    {
      compat::Autocast ac(true, torch::kCUDA);
      scope.emplace(only_bias(FusePolicy::Never));
      plain = conv(x, w, b, 1, 1);
      scope.reset();
      added = conv(x, w, b, 1, 1);
    }
    EXPECT_EQ(added.scalar_type(), torch::kBFloat16);
    // The ReLU moves no two values further apart, so the bound holds through it.
    const torch::Tensor d = (added.to(torch::kFloat) - plain.to(torch::kFloat)).abs();
    const torch::Tensor bound = std::ldexp(1.0, -7) * (plain.to(torch::kFloat).abs() + b.abs().view({1, -1, 1, 1}));
    EXPECT_TRUE((d <= bound).all().item<bool>()) << d.max();
  }
}
