// G's upsampled shortcut add by hamgan's kernels (layers/upsample_add_cuda.cu) against its ATen
// form (train.upsample_add_kernel=false), in double, fp32, bf16 and fp16, both memory formats,
// on the 16-byte vector path (channels-last, channels a multiple of the pack) and the scalar one
// (5 channels, or N C H W): the sum is one rounding of the same two terms, so it is equal bit
// for bit; the shortcut's gradient, the sum of each 2x2 block, is checked against that sum in
// double to within one rounding to the dtype plus fp32 round-off of four terms. Needs a GPU.
#include <gtest/gtest.h>

#include <optional>

#include <cmath>

#include "layers/upsample_conv.h"

#include "support/kernel_scopes.h"

using namespace hamgan;
using namespace hamgan::test;

namespace {

const torch::Device kGpu(torch::kCUDA, 0);

struct Out {
  torch::Tensor y, dh, ds;
};

Out run(const torch::Tensor& h0, const torch::Tensor& s0, const torch::Tensor& up, FusePolicy policy) {
  std::optional<KernelScope> scope;  // the layer forms this test puts in force
  scope.emplace(only_upsample_add(policy));
  torch::Tensor h = h0.detach().requires_grad_(true), s = s0.detach().requires_grad_(true);
  const torch::Tensor y = add_upsampled2(h, s);
  (y.to(torch::kDouble) * up).sum().backward();
  scope.reset();
  return {y.detach(), h.grad(), s.grad()};
}

// Units in the last place of the dtype's significand (2^-52, 2^-23, 2^-7, 2^-10).
double unit(torch::Dtype d) {
  return d == torch::kDouble ? std::ldexp(1.0, -52)
         : d == torch::kFloat ? std::ldexp(1.0, -23)
         : d == torch::kBFloat16 ? std::ldexp(1.0, -7)
                                 : std::ldexp(1.0, -10);
}

}  // namespace

TEST(UpsampleAddCuda, KernelsEqualTheAtenForm) {
  ASSERT_TRUE(upsample_add_kernel_pays(torch::zeros({1}, kGpu)));
  torch::manual_seed(41);
  // 16 channels fill the pack of every dtype (vector path in channels-last); 5 do not (scalar).
  for (const int64_t c : {16, 5})
    for (const auto dtype : {torch::kDouble, torch::kFloat, torch::kBFloat16, torch::kHalf})
      for (const auto format : {torch::MemoryFormat::Contiguous, torch::MemoryFormat::ChannelsLast}) {
        SCOPED_TRACE(testing::Message() << c << " channels, " << dtype << " " << format);
        const torch::Tensor h = torch::randn({3, c, 6, 10}, kGpu).to(dtype).contiguous(format);
        const torch::Tensor s = torch::randn({3, c, 3, 5}, kGpu).to(dtype).contiguous(format);
        const torch::Tensor up = torch::randn({3, c, 6, 10}, kGpu).to(dtype).to(torch::kDouble);
        const Out want = run(h, s, up, FusePolicy::Never), got = run(h, s, up, FusePolicy::WherePays);
        EXPECT_TRUE(torch::equal(got.y, want.y)) << (got.y.to(torch::kDouble) - want.y.to(torch::kDouble)).abs().max();
        EXPECT_EQ(got.y.is_contiguous(torch::MemoryFormat::ChannelsLast), format == torch::MemoryFormat::ChannelsLast);
        EXPECT_TRUE(torch::equal(got.dh, want.dh));
        // ds: the gradient arrives in the dtype; its 2x2 sums in double, then the bound.
        const torch::Tensor g = up.to(dtype).to(torch::kDouble);
        const torch::Tensor exact = g.view({3, c, 3, 2, 5, 2}).sum({3, 5});
        const torch::Tensor magnitude = g.abs().view({3, c, 3, 2, 5, 2}).sum({3, 5});
        const double u = unit(dtype), u32 = dtype == torch::kDouble ? u : std::ldexp(1.0, -23);
        const torch::Tensor err = (got.ds.to(torch::kDouble) - exact).abs();
        const torch::Tensor bound = exact.abs() * u / 2 + magnitude * 4 * u32;
        EXPECT_TRUE((err <= bound).all().item<bool>()) << (err - bound).max();
        EXPECT_EQ(got.ds.scalar_type(), dtype);
        EXPECT_EQ(got.ds.sizes(), s.sizes());
      }
}

// As G's blocks run it under bf16 autocast (h and s bf16 convolution outputs, channels-last), the
// auto policy takes the kernels.
TEST(UpsampleAddCuda, Bf16ChannelsLastTakesTheKernels) {
  torch::manual_seed(42);
  const torch::Tensor h =
      torch::randn({4, 32, 16, 16}, kGpu).to(torch::kBFloat16).contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor s =
      torch::randn({4, 32, 8, 8}, kGpu).to(torch::kBFloat16).contiguous(torch::MemoryFormat::ChannelsLast);
  torch::Tensor hg = h.detach().requires_grad_(true), sg = s.detach().requires_grad_(true);
  const torch::Tensor y = add_upsampled2(hg, sg);
  EXPECT_NE(y.grad_fn()->name().find("UpsampleAdd"), std::string::npos) << y.grad_fn()->name();
  y.sum().backward();
  EXPECT_TRUE(torch::equal(sg.grad(), torch::full_like(s, 4.0)));
  EXPECT_TRUE(torch::equal(hg.grad(), torch::ones_like(h)));
}
