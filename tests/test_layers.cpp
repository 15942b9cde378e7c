// Conditional BN, G/D blocks and SAGAN self-attention against the Python reference
// (oracle/layers.py, built on torch.nn.utils.spectral_norm), and gradient checks.
#include <gtest/gtest.h>

#include <optional>

#include <cmath>
#include <functional>

#include "layers/cond_bn.h"
#include "core/compat.h"
#include "core/error.h"
#include "core/cpu_features.h"
#include "layers/channel_bias.h"
#include "layers/conv_avgpool.h"
#include "layers/fold_taps.h"
#include "layers/upsample_conv.h"
#include "layers/context/self_attention.h"
#include "layers/dblock.h"
#include "layers/gblock.h"
#include "layers/minibatch_std.h"
#include "support/gradcheck.h"
#include "support/kernel_scopes.h"
#include "support/module_check.h"
#include "support/oracle.h"

namespace test_layers {

using namespace hamgan;
using namespace hamgan::test;

namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;  // fp32; BN and softmax reduce in other orders
const SNOptions kSN{1e-6, 1};

template <typename M, typename Fwd>
void check(M m, const std::string& file, Fwd fwd, int n_inputs) {
  std::vector<std::string> keys;
  for (int i = 0; i < n_inputs; ++i) keys.push_back("in" + std::to_string(i));
  expect_matches_oracle(*m, file, [&](const std::vector<torch::Tensor>& in) { return fwd(m, in); },
                        keys, kRtol, kAtol);
}

}  // namespace

TEST(CondBatchNorm, LabelsMatchReference) {
  check(CondBatchNorm2d(6, CondSpec{CondKind::labels, 4}, 1e-5, kSN), "cbn_labels.pt",
        [](auto& m, auto& in) { return m->forward(in[0], in[1]); }, 2);
}

TEST(CondBatchNorm, SharedVectorMatchesReference) {
  check(CondBatchNorm2d(6, CondSpec{CondKind::vector, 7}, 1e-5, kSN), "cbn_vector.pt",
        [](auto& m, auto& in) { return m->forward(in[0], in[1]); }, 2);
}

TEST(Blocks, GBlockMatchesReference) {
  check(GBlock(6, 4, true, CondSpec{CondKind::labels, 5}, 1e-5, kSN), "gblock.pt",
        [](auto& m, auto& in) { return m->forward(in[0], in[1]); }, 2);
}

TEST(Blocks, OptimizedFirstDBlockMatchesReference) {
  check(DBlock(3, 8, false, true, kSN), "dblock_optimized.pt",
        [](auto& m, auto& in) { return m->forward(in[0]); }, 1);
}

TEST(Blocks, DBlockMatchesReference) {
  check(DBlock(8, 12, true, true, kSN), "dblock.pt", [](auto& m, auto& in) { return m->forward(in[0]); }, 1);
}

TEST(Blocks, NonDownsamplingDBlockMatchesReference) {
  check(DBlock(8, 8, true, false, kSN), "dblock_keep.pt", [](auto& m, auto& in) { return m->forward(in[0]); }, 1);
}

TEST(SelfAttention, MatchesReferenceWithNonSquareInput) {
  check(std::make_shared<SelfAttentionImpl>(16, SelfAttentionOptions{}, kSN), "attention.pt",
        [](auto& m, auto& in) { return m->forward(in[0], {}); }, 1);
}

TEST(SelfAttention, GradcheckDouble) {
  torch::manual_seed(7);
  auto m = std::make_shared<SelfAttentionImpl>(16, SelfAttentionOptions{}, SNOptions{1e-12, 1});
  m->to(torch::kDouble);
  m->eval();
  {
    torch::NoGradGuard ng;
    m->gamma.fill_(0.7);
  }
  torch::Tensor x = torch::randn({2, 16, 4, 6}, torch::kDouble).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return m->forward(x, {}); },
                        {x, m->gamma, m->theta->weight_orig, m->phi->weight_orig,
                         m->g->weight_orig, m->o->weight_orig}));
}

TEST(SelfAttention, StartsAsIdentity) {
  auto m = std::make_shared<SelfAttentionImpl>(16, SelfAttentionOptions{}, kSN);
  const torch::Tensor x = torch::randn({2, 16, 4, 4});
  EXPECT_TRUE(torch::equal(m->forward(x, {}), x));
}

TEST(Blocks, GradcheckDoubleGBlockEval) {
  torch::manual_seed(8);
  GBlock m(3, 2, true, CondSpec{CondKind::vector, 4}, 1e-5, SNOptions{1e-12, 1});
  m->to(torch::kDouble);
  m->eval();
  torch::Tensor x = torch::randn({2, 3, 3, 2}, torch::kDouble).requires_grad_(true);
  torch::Tensor c = torch::randn({2, 4}, torch::kDouble).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return m->forward(x, c); }, {x, c}));
}

namespace {
// A folded convolution against its plain form: both sum k = taps * c products (9c for a 3x3,
// 4c for the pooled 1x1) in another order, each erring by at most ~k u |x||w| (u the unit
// roundoff), typically sqrt(k) u |x||w|; bounded per element at 4 sqrt(k) u times `mag`, the
// same sums over |x| and |w| plus |bias|.
void expect_within_rounding(const torch::Tensor& got, const torch::Tensor& want, const torch::Tensor& mag, int64_t c,
                            double taps = 9) {
  const double u = got.scalar_type() == torch::kDouble ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const torch::Tensor bound = 4 * std::sqrt(taps * c) * u * mag;
  EXPECT_TRUE(((got - want).abs() <= bound).all().item<bool>())
      << "worst error / bound: " << ((got - want).abs() / bound).max().item<double>();
}

// The folded forms' sweeps: f(x, channels_last) for a random x of every shape, in float64
// (exact up to rounding) and fp32, NCHW and channels-last.
void each_input(const std::vector<std::vector<int64_t>>& shapes,
                const std::function<void(const torch::Tensor&, bool)>& f) {
  for (auto dtype : {torch::kDouble, torch::kFloat})
    for (const auto& shape : shapes)
      for (bool cl : {false, true}) {
        SCOPED_TRACE(::testing::Message() << dtype << " " << torch::IntArrayRef(shape) << (cl ? " channels-last" : " NCHW"));
        const torch::Tensor x = torch::randn(shape, torch::TensorOptions(dtype));
        f(cl ? x.contiguous(torch::MemoryFormat::ChannelsLast) : x, cl);
      }
}
}  // namespace

// The folded form against the plain one it replaces, avg_pool2d(conv2d(x, w, b, pad 1), 2):
// even and odd sizes, NCHW and channels-last, in float64 (exact up to rounding) and fp32.
TEST(ConvAvgPool, MatchesConvThenPool) {
  torch::manual_seed(3);
  each_input({{2, 3, 8, 8}, {1, 5, 7, 9}, {3, 4, 2, 2}, {2, 16, 16, 16}}, [](const torch::Tensor& x, bool) {
    const int64_t c = x.size(1);
    const torch::Tensor w = torch::randn({6, c, 3, 3}, x.options()), b = torch::randn({6}, x.options());
    const torch::Tensor want = torch::avg_pool2d(torch::conv2d(x, w, b, 1, 1), {2, 2});
    const torch::Tensor got = conv3x3_avgpool2(x, w, b);
    ASSERT_EQ(got.sizes(), want.sizes());
    expect_within_rounding(got, want, torch::avg_pool2d(torch::conv2d(x.abs(), w.abs(), {}, 1, 1), {2, 2}) + b.abs().view({-1, 1, 1}), c);
  });
  EXPECT_THROW(avgpool_folded_kernel(torch::randn({2, 2, 1, 1})), std::exception);
}

TEST(ConvAvgPool, GradcheckDouble) {
  torch::manual_seed(4);
  torch::Tensor x = torch::randn({2, 3, 5, 6}, torch::kDouble).requires_grad_(true);
  torch::Tensor w = torch::randn({4, 3, 3, 3}, torch::kDouble).requires_grad_(true);
  torch::Tensor b = torch::randn({4}, torch::kDouble).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return conv3x3_avgpool2(x, w, b); }, {x, w, b}));
  // And the gradients equal the plain form's (same function, so same derivative).
  const torch::Tensor r = torch::randn({2, 4, 2, 3}, torch::kDouble);
  const auto grads = [&](const torch::Tensor& y) {
    return torch::autograd::grad({(y * r).sum()}, {x, w, b});
  };
  const auto g1 = grads(conv3x3_avgpool2(x, w, b)),
             g2 = grads(torch::avg_pool2d(torch::conv2d(x, w, b, 1, 1), {2, 2}));
  for (size_t i = 0; i < g1.size(); ++i) EXPECT_TRUE(close(g1[i], g2[i], 1e-12, 1e-12)) << i;
}

// D's shortcut folded, one 2x2 stride-2 convolution, against pool-then-1x1-conv: even and odd
// sizes, NCHW and channels-last, float64 and fp32; values and the gradients of x, w and b.
TEST(AvgPoolConv1x1, MatchesPoolThenConv) {
  torch::manual_seed(9);
  each_input({{2, 3, 8, 8}, {1, 5, 7, 9}, {3, 4, 2, 2}, {2, 16, 16, 16}}, [](const torch::Tensor& x0, bool) {
    const int64_t c = x0.size(1);
    const torch::Tensor x = x0.detach().requires_grad_(true);
    const torch::Tensor w = torch::randn({6, c, 1, 1}, x.options()).requires_grad_(true);
    const torch::Tensor b = torch::randn({6}, x.options()).requires_grad_(true);
    const torch::Tensor want = torch::conv2d(torch::avg_pool2d(x, {2, 2}), w, b);
    const torch::Tensor got = avgpool2_conv1x1(x, w, b);
    ASSERT_EQ(got.sizes(), want.sizes());
    expect_within_rounding(got, want, torch::conv2d(torch::avg_pool2d(x.abs(), {2, 2}), w.abs()) + b.abs().view({-1, 1, 1}),
                           c, 4);
    if (x.scalar_type() != torch::kDouble) return;
    const torch::Tensor r = torch::randn_like(want);
    const auto g1 = torch::autograd::grad({got}, {x, w, b}, {r}), g2 = torch::autograd::grad({want}, {x, w, b}, {r});
    for (size_t i = 0; i < g1.size(); ++i) EXPECT_TRUE(close(g1[i], g2[i], 1e-12, 1e-12)) << "gradient " << i;
  });
  // Without a bias too, and a weight that is not 1x1 is refused by name.
  const torch::Tensor x = torch::randn({1, 2, 4, 5}, torch::kDouble), w = torch::randn({3, 2, 1, 1}, torch::kDouble);
  EXPECT_TRUE(close(avgpool2_conv1x1(x, w, {}), torch::conv2d(torch::avg_pool2d(x, {2, 2}), w), 1e-12, 1e-12));
  EXPECT_THROW(avgpool2_conv1x1(x, torch::randn({3, 2, 3, 3}, torch::kDouble), {}), std::exception);
}

TEST(AvgPoolConv1x1, GradcheckDouble) {
  torch::manual_seed(10);
  torch::Tensor x = torch::randn({2, 3, 5, 6}, torch::kDouble).requires_grad_(true);
  torch::Tensor w = torch::randn({4, 3, 1, 1}, torch::kDouble).requires_grad_(true);
  torch::Tensor b = torch::randn({4}, torch::kDouble).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return avgpool2_conv1x1(x, w, b); }, {x, w, b}));
  torch::Tensor xc = x.detach().contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return avgpool2_conv1x1(xc, w, b); }, {xc, w, b}));
}

namespace {
// A fold policy in force for a scope (the others at auto).
struct FoldScope {
  explicit FoldScope(FoldPolicy p) : scope(only_folded(p)) {}
  KernelScope scope;
};
}  // namespace

// A downsampling DBlock folded (main path and shortcut) against the same block as written, in
// float64: output and every gradient (input and parameters) equal up to rounding. Eval mode, so
// spectral norm's power iteration leaves u, v as they were between the two forwards.
TEST(Blocks, FoldedDBlockEqualsPlainDBlock) {
  torch::manual_seed(11);
  for (bool preactivation : {false, true}) {
    SCOPED_TRACE(preactivation ? "pre-activation" : "optimized first block");
    DBlock m(3, 5, preactivation, true, kSN);
    m->to(torch::kDouble);
    m->eval();
    const torch::Tensor x = torch::randn({2, 3, 8, 6}, torch::kDouble).requires_grad_(true);
    std::vector<torch::Tensor> inputs{x};
    for (const auto& p : m->parameters()) inputs.push_back(p);
    const torch::Tensor r = torch::randn({2, 5, 4, 3}, torch::kDouble);
    const auto run = [&](FoldPolicy p) {
      FoldScope scope(p);
      const torch::Tensor y = m->forward(x);
      auto g = torch::autograd::grad({y}, inputs, {r});
      g.insert(g.begin(), y);
      return g;
    };
    const auto folded = run(FoldPolicy::Always), plain = run(FoldPolicy::Never);
    ASSERT_EQ(folded.size(), plain.size());
    for (size_t i = 0; i < folded.size(); ++i)
      EXPECT_TRUE(close(folded[i], plain[i], 1e-12, 1e-12)) << (i ? "gradient " + std::to_string(i - 1) : "output");
  }
}

namespace {
torch::Tensor nearest_up2(const torch::Tensor& x) {
  return torch::upsample_nearest2d(x, {2 * x.size(2), 2 * x.size(3)});
}

// Both forms of the folded upsample + conv (train.upsample_conv), each with its own KernelScope.
const UpsampleConvForm kUpsampleConvForms[] = {UpsampleConvForm::SubPixel, UpsampleConvForm::Transposed};
KernelChoice upsample_conv_form(UpsampleConvForm form) { return only(&KernelChoice::upsample_conv, form); }
}  // namespace

// The sub-pixel form against the plain one it replaces, conv2d(up2(x), w, b, pad 1): odd and
// even sizes down to 1x1, NCHW and channels-last (kept in the result), float64 and fp32.
TEST(UpsampleConv, MatchesUpsampleThenConv) {
  for (const UpsampleConvForm form : kUpsampleConvForms) {
    SCOPED_TRACE(form == UpsampleConvForm::Transposed ? "transposed" : "subpixel");
    const KernelScope scope(upsample_conv_form(form));
    torch::manual_seed(5);
    each_input({{2, 3, 4, 4}, {1, 5, 3, 7}, {3, 4, 1, 1}, {2, 16, 16, 16}}, [](const torch::Tensor& x, bool cl) {
      const int64_t c = x.size(1);
      const torch::Tensor w = torch::randn({6, c, 3, 3}, x.options()), b = torch::randn({6}, x.options());
      const torch::Tensor want = torch::conv2d(nearest_up2(x), w, b, 1, 1);
      const torch::Tensor got = upsample2_conv3x3(x, w, b);
      ASSERT_EQ(got.sizes(), want.sizes());
      if (cl && x.size(2) > 1) { EXPECT_TRUE(got.is_contiguous(torch::MemoryFormat::ChannelsLast)); }
      if (!cl) { EXPECT_TRUE(got.is_contiguous()); }
      // (The folded form sums up to 4 weights first: one more rounding of each.)
      expect_within_rounding(got, want, torch::conv2d(nearest_up2(x.abs()), w.abs(), {}, 1, 1) + b.abs().view({-1, 1, 1}), c);
    });
  }
  // Without a bias too, and a wrong kernel shape is refused by name.
  const torch::Tensor x = torch::randn({1, 2, 3, 3}, torch::kDouble), w = torch::randn({3, 2, 3, 3}, torch::kDouble);
  EXPECT_TRUE(close(upsample2_conv3x3(x, w, {}), torch::conv2d(nearest_up2(x), w, {}, 1, 1), 1e-12, 1e-12));
  EXPECT_THROW(upsample_folded_kernels(torch::randn({2, 2, 1, 1})), std::exception);
}

// Under bf16 autocast (where folded_conv_pays, the blocks take the folded forms there too): each
// folded form against the plain one in float64 on the same inputs. The error sources: x, the
// derived kernel, the bias and the output each rounded to bf16 once (u = 2^-8 relative to the
// magnitude sum), and where LibTorch's bf16 kernels add into bf16 (1.13 on AVX2 CPUs,
// core/compat.h) the sum's own rounding, as in expect_within_rounding with u = 2^-8.
TEST(FoldedConv, Bf16AutocastWithinItsRounding) {
  torch::manual_seed(7);
  const double u = std::ldexp(1.0, -8);
  for (auto shape : std::vector<std::vector<int64_t>>{{2, 8, 8, 8}, {1, 5, 7, 9}, {2, 16, 16, 16}}) {
    SCOPED_TRACE(::testing::Message() << torch::IntArrayRef(shape));
    const int64_t c = shape[1];
    const double slack = 4 + (compat::cpu_bf16_accumulates_in_fp32() ? 0 : 4 * std::sqrt(9.0 * c));
    const torch::Tensor x = torch::randn(shape).contiguous(torch::MemoryFormat::ChannelsLast);
    const torch::Tensor w = torch::randn({6, c, 3, 3}), b = torch::randn({6});
    const auto xd = x.to(torch::kDouble), wd = w.to(torch::kDouble), bd = b.to(torch::kDouble);
    const torch::Tensor w1 = torch::randn({6, c, 1, 1}), w1d = w1.to(torch::kDouble);
    torch::Tensor pooled, upsampled, shortcut;
    {
      compat::Autocast bf16(true, torch::kCPU);
      pooled = conv3x3_avgpool2(x, w, b);
      upsampled = upsample2_conv3x3(x, w, b);
      shortcut = avgpool2_conv1x1(x, w1, b);
    }
    EXPECT_EQ(pooled.scalar_type(), torch::kBFloat16);
    const auto check = [&](const torch::Tensor& got, const torch::Tensor& want, const torch::Tensor& mag) {
      const torch::Tensor err = (got.to(torch::kDouble) - want).abs(), bound = slack * u * mag;
      EXPECT_TRUE((err <= bound).all().item<bool>()) << "worst error / bound: " << (err / bound).max().item<double>();
    };
    check(pooled, torch::avg_pool2d(torch::conv2d(xd, wd, bd, 1, 1), {2, 2}),
          torch::avg_pool2d(torch::conv2d(xd.abs(), wd.abs(), {}, 1, 1), {2, 2}) + bd.abs().view({-1, 1, 1}));
    check(upsampled, torch::conv2d(nearest_up2(xd), wd, bd, 1, 1),
          torch::conv2d(nearest_up2(xd.abs()), wd.abs(), {}, 1, 1) + bd.abs().view({-1, 1, 1}));
    // (The shortcut sums 4c products, fewer than the 9c the slack allows for.)
    EXPECT_EQ(shortcut.scalar_type(), torch::kBFloat16);
    check(shortcut, torch::conv2d(torch::avg_pool2d(xd, {2, 2}), w1d, bd),
          torch::conv2d(torch::avg_pool2d(xd.abs(), {2, 2}), w1d.abs()) + bd.abs().view({-1, 1, 1}));
  }
}

// Which form the blocks take: folded in fp32 always; under CPU bf16 autocast unless oneDNN runs
// the plain 3x3 on AMX tiles (layers/fold_taps.h).
TEST(FoldedConv, PaysInFp32AndInBf16WithoutAmx) {
  const torch::Tensor x = torch::randn({1, 2, 4, 4});
  EXPECT_TRUE(folded_conv_pays(x));
  EXPECT_EQ(folded_conv_pays(x.to(torch::kBFloat16)), !cpu_has_amx());
  compat::Autocast bf16(true, torch::kCPU);
  EXPECT_EQ(folded_conv_pays(x), !cpu_has_amx());
}

// train.folded_convs: false keeps every block on the plain forms, true folds every block, in
// fp32 and under autocast (on AMX CPUs too, where auto keeps bf16 on the plain forms).
TEST(FoldedConv, SwitchedOffNeverPaysSwitchedOnAlwaysFolds) {
  std::optional<KernelScope> scope;  // the layer forms this test puts in force
  const torch::Tensor x = torch::randn({1, 2, 4, 4});
  scope.emplace(only_folded(FoldPolicy::Never));
  bool fp32 = folded_conv_pays(x), bf16 = folded_conv_pays(x.to(torch::kBFloat16));
  EXPECT_FALSE(fp32);
  EXPECT_FALSE(bf16);
  scope.emplace(only_folded(FoldPolicy::Always));
  fp32 = folded_conv_pays(x);
  {
    compat::Autocast autocast(true, torch::kCPU);
    bf16 = folded_conv_pays(x);
  }
  scope.reset();
  EXPECT_TRUE(fp32);
  EXPECT_TRUE(bf16);
  EXPECT_TRUE(folded_conv_pays(x));
}

TEST(UpsampleConv, GradcheckDouble) {
  for (const UpsampleConvForm form : kUpsampleConvForms) {
    SCOPED_TRACE(form == UpsampleConvForm::Transposed ? "transposed" : "subpixel");
    const KernelScope scope(upsample_conv_form(form));
    torch::manual_seed(6);
    torch::Tensor x = torch::randn({2, 3, 3, 4}, torch::kDouble).requires_grad_(true);
    torch::Tensor w = torch::randn({4, 3, 3, 3}, torch::kDouble).requires_grad_(true);
    torch::Tensor b = torch::randn({4}, torch::kDouble).requires_grad_(true);
    EXPECT_TRUE(gradcheck([&] { return upsample2_conv3x3(x, w, b); }, {x, w, b}));
    torch::Tensor xc = x.detach().contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
    EXPECT_TRUE(gradcheck([&] { return upsample2_conv3x3(xc, w, b); }, {xc, w, b}));
    // And the gradients equal the plain form's (same function, so same derivative).
    const torch::Tensor r = torch::randn({2, 4, 6, 8}, torch::kDouble);
    const auto grads = [&](const torch::Tensor& y) {
      return torch::autograd::grad({(y * r).sum()}, {x, w, b});
    };
    const auto g1 = grads(upsample2_conv3x3(x, w, b)), g2 = grads(torch::conv2d(nearest_up2(x), w, b, 1, 1));
    for (size_t i = 0; i < g1.size(); ++i) EXPECT_TRUE(close(g1[i], g2[i], 1e-12, 1e-12)) << i;
  }
}

// train.upsample_conv=transposed's kernel: a single 3x3 tap lands where the taps (w2, w1+w2,
// w0+w1, w0) along each axis put it. (Its values and gradients: the two tests above, per form.)
TEST(UpsampleConv, TransposedKernelTaps) {
  const torch::Tensor w1 = torch::zeros({1, 1, 3, 3}, torch::kDouble);
  w1[0][0][1][2] = 1;  // w[row 1, column 2]: along rows 0 1 1 0, along columns 1 1 0 0
  EXPECT_TRUE(torch::equal(upsample_transposed_kernel(w1)[0][0],
                           torch::tensor({0., 1., 1., 0.}, torch::kDouble).outer(torch::tensor({1., 1., 0., 0.}, torch::kDouble))));
}

// The backward writes the gradient of every position of the phases' convolution, the ones no
// output pixel reads included (zero there), into uninitialised memory. Freed NaN-filled blocks of
// the same size, both memory formats, odd and even sizes: any position left unwritten would
// carry a NaN (or stale value) into the weight's and input's gradients.
TEST(UpsampleConv, BackwardLeavesNoStaleValues) {
  torch::manual_seed(8);
  for (auto shape : std::vector<std::vector<int64_t>>{{2, 3, 3, 4}, {1, 4, 1, 1}, {2, 5, 6, 6}})
    for (bool cl : {false, true}) {
      SCOPED_TRACE(::testing::Message() << torch::IntArrayRef(shape) << (cl ? " channels-last" : ""));
      torch::Tensor x = torch::randn(shape, torch::kDouble);
      if (cl) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
      x.requires_grad_(true);
      torch::Tensor w = torch::randn({4, shape[1], 3, 3}, torch::kDouble).requires_grad_(true);
      const torch::Tensor r = torch::randn({shape[0], 4, 2 * shape[2], 2 * shape[3]}, torch::kDouble);
      const auto g_plain = torch::autograd::grad({(torch::conv2d(nearest_up2(x), w, {}, 1, 1) * r).sum()}, {x, w});
      for (int round = 0; round < 3; ++round) {
        const torch::Tensor y = upsample2_conv3x3(x, w, {});
        // The phases' output: [N, 4 out, H + 1, W + 1].
        torch::full({shape[0], 16, shape[2] + 1, shape[3] + 1}, std::nan(""), torch::kDouble).reset();
        const auto g = torch::autograd::grad({(y * r).sum()}, {x, w});
        EXPECT_TRUE(close(g[0], g_plain[0], 1e-12, 1e-12));
        EXPECT_TRUE(close(g[1], g_plain[1], 1e-12, 1e-12));
      }
    }
}

// G's shortcut: the upsampling joined to the residual add computes every sum exactly as
// upsample-then-add (bit for bit, in fp32 and bf16, both memory formats), keeps h's memory
// format, and gives the shortcut the same gradient (the 2x2 sums, in double to round-off).
TEST(AddUpsampled, EqualsUpsampleThenAddBitForBit) {
  namespace F = torch::nn::functional;
  const auto up = [](const torch::Tensor& s) {
    return F::interpolate(s, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest));
  };
  for (const auto format : {torch::MemoryFormat::Contiguous, torch::MemoryFormat::ChannelsLast})
    for (const auto dtype : {torch::kFloat, torch::kBFloat16}) {
      const torch::Tensor h = torch::randn({3, 5, 8, 6}).to(dtype).contiguous(format);
      const torch::Tensor s = torch::randn({3, 5, 4, 3}).to(dtype).contiguous(format);
      const torch::Tensor y = add_upsampled2(h, s);
      EXPECT_TRUE(torch::equal(y, h + up(s)));
      EXPECT_EQ(y.is_contiguous(torch::MemoryFormat::ChannelsLast), format == torch::MemoryFormat::ChannelsLast);
    }
  const torch::Tensor h = torch::randn({2, 3, 6, 4}, torch::kDouble).requires_grad_(true);
  const torch::Tensor s = torch::randn({2, 3, 3, 2}, torch::kDouble).requires_grad_(true);
  const torch::Tensor r = torch::randn({2, 3, 6, 4}, torch::kDouble);
  const auto grads = [&](const torch::Tensor& y) { return torch::autograd::grad({(y * r).sum()}, {h, s}); };
  const auto a = grads(add_upsampled2(h, s)), b = grads(h + up(s));
  EXPECT_TRUE(torch::equal(a[0], b[0]));
  EXPECT_LT((a[1] - b[1]).abs().max().item<double>(), 1e-14);
  EXPECT_THROW(add_upsampled2(h, s.narrow(2, 0, 2)), Error);
}

// train.upsample_add_kernel: auto takes hamgan's kernels on CUDA only (tests/cuda/
// test_upsample_add_cuda.cpp checks them against this ATen form); true on a CPU is the ATen form.
TEST(AddUpsampled, KernelSwitchIsCudaOnlyUnderAuto) {
  std::optional<KernelScope> scope;  // the layer forms this test puts in force
  const torch::Tensor h = torch::randn({2, 3, 6, 4}), s = torch::randn({2, 3, 3, 2});
  EXPECT_FALSE(upsample_add_kernel_pays(h));
  scope.emplace(only_upsample_add(FusePolicy::Always));
  EXPECT_TRUE(upsample_add_kernel_pays(h));
  const torch::Tensor y = add_upsampled2(h, s);
  scope.emplace(only_upsample_add(FusePolicy::Never));
  EXPECT_FALSE(upsample_add_kernel_pays(h));
  EXPECT_TRUE(torch::equal(y, add_upsampled2(h, s)));
  scope.reset();
}

// The shortcuts fold on GPUs only where the policy is auto (CPUs keep the pool and the
// upsampling: D's 4x shortcut MACs cost more there); true and false decide everywhere.
TEST(FoldedConv, ShortcutsFoldOnGpusUnlessSwitched) {
  std::optional<KernelScope> scope;  // the layer forms this test puts in force
  const torch::Tensor x = torch::randn({1, 2, 4, 4});
  EXPECT_FALSE(folded_shortcut_pays(x));
  scope.emplace(only_folded(FoldPolicy::Always));
  EXPECT_TRUE(folded_shortcut_pays(x));
  scope.emplace(only_folded(FoldPolicy::Never));
  EXPECT_FALSE(folded_shortcut_pays(x));
  scope.reset();
}

// The minibatch standard deviation's gradient in double, through a full group, a remainder group
// of two and one of a single image (whose deviation is constant), with two channel parts.
TEST(MinibatchStd, GradcheckDouble) {
  torch::manual_seed(11);
  for (const int64_t n : {8, 6, 5}) {
    torch::Tensor x = torch::randn({n, 4, 3, 2}, torch::kDouble).requires_grad_(true);
    EXPECT_TRUE(gradcheck([&] { return minibatch_std(x, 4, 2); }, {x})) << n << " images";
  }
}

// Under bf16 autocast the statistics are taken in fp32 and only the appended maps are rounded.
TEST(MinibatchStd, Bf16KeepsItsInputAndRoundsOnlyTheMaps) {
  torch::manual_seed(12);
  const torch::Tensor x = torch::randn({8, 6, 4, 4}).to(torch::kBFloat16);
  const torch::Tensor y = minibatch_std(x, 4, 1), ref = minibatch_std(x.to(torch::kFloat), 4, 1);
  ASSERT_EQ(y.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(y.narrow(1, 0, 6), x));
  EXPECT_TRUE(torch::equal(y.narrow(1, 6, 1), ref.narrow(1, 6, 1).to(torch::kBFloat16)));
}

// The bias add of layers/channel_bias.h (train.bias_kernel) in its ATen form, alone and with the
// ReLU that follows D's first convolution: equal to torch::conv2d's own bias (then torch::relu) up
// to fp32 round-off of the summation order, in both memory formats (the ReLU moves no two values
// further apart); its gradient is checked in double; a bias of the wrong size is named in the
// error. tests/cuda/test_channel_bias_cuda.cpp checks the CUDA kernel against this form.
TEST(ChannelBias, ConvWithItEqualsConvWithItsOwnBias) {
  std::optional<KernelScope> scope;  // the layer forms this test puts in force
  torch::manual_seed(21);
  const torch::Tensor w = torch::randn({6, 5, 3, 3}), b = torch::randn({6});
  for (const bool relu : {false, true})
    for (const auto format : {torch::MemoryFormat::Contiguous, torch::MemoryFormat::ChannelsLast}) {
      SCOPED_TRACE(relu ? "conv2d_bias_relu" : "conv2d_bias");
      const auto conv = relu ? conv2d_bias_relu : conv2d_bias;
      const torch::Tensor x = torch::randn({3, 5, 7, 6}).contiguous(format);
      scope.emplace(only_bias(FusePolicy::Never));
      EXPECT_FALSE(bias_kernel_pays(x));
      const torch::Tensor plain = conv(x, w, b, 1, 1);
      scope.emplace(only_bias(FusePolicy::Always));
      const torch::Tensor added = conv(x, w, b, 1, 1);
      scope.reset();
      EXPECT_FALSE(bias_kernel_pays(x)) << "auto: CUDA only";
      const torch::Tensor conv_b = torch::conv2d(x, w, b, 1, 1);
      EXPECT_TRUE(torch::equal(plain, relu ? torch::relu(conv_b) : conv_b));
      if (relu) {
        EXPECT_GT((added == 0).sum().item<int64_t>(), added.numel() / 4) << "the ReLU clipped";
      }
      // The plain form may add the bias inside the convolution's accumulation: the two differ by
      // the summation order of 45 products and the bias.
      expect_within_rounding(added, plain, torch::conv2d(x.abs(), w.abs(), {}, 1, 1) + b.abs().view({-1, 1, 1}), 5);
      EXPECT_EQ(added.is_contiguous(torch::MemoryFormat::ChannelsLast),
                plain.is_contiguous(torch::MemoryFormat::ChannelsLast));
    }
}

TEST(ChannelBias, Bf16RoundsTheFp32SumOnce) {
  torch::manual_seed(22);
  const torch::Tensor y = torch::randn({2, 4, 3, 5}).to(torch::kBFloat16), b = torch::randn({4});
  const torch::Tensor got = add_channel_bias(y, b);
  EXPECT_EQ(got.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(got, (y.to(torch::kFloat) + b.view({1, 4, 1, 1})).to(torch::kBFloat16)));
}

TEST(ChannelBias, GradcheckDouble) {
  torch::manual_seed(23);
  torch::Tensor y = torch::randn({2, 3, 4, 5}, torch::kDouble).contiguous(torch::MemoryFormat::ChannelsLast);
  y.requires_grad_(true);
  torch::Tensor b = torch::randn({3}, torch::kDouble).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return add_channel_bias(y, b); }, {y, b}));
  EXPECT_TRUE(gradcheck([&] { return add_channel_bias_relu(y, b); }, {y, b})) << "with the ReLU";
}

// In bf16 the fused form is the ReLU of the once-rounded fp32 sum, bit for bit (rounding is
// monotone and keeps 0), a NaN stays NaN as in torch::relu, and its gradients equal those of
// torch::relu after add_channel_bias.
TEST(ChannelBias, ReluBf16IsTheReluOfTheRoundedSum) {
  torch::manual_seed(25);
  torch::Tensor y = torch::randn({2, 4, 3, 5}).to(torch::kBFloat16);
  y[0][1][2][3] = std::nan("");
  const torch::Tensor b = torch::randn({4});
  torch::Tensor y1 = y.clone().requires_grad_(true), y2 = y.clone().requires_grad_(true);
  torch::Tensor b1 = b.clone().requires_grad_(true), b2 = b.clone().requires_grad_(true);
  const torch::Tensor got = add_channel_bias_relu(y1, b1), want = torch::relu(add_channel_bias(y2, b2));
  EXPECT_EQ(got.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(got.nan_to_num(-7), want.nan_to_num(-7)));
  EXPECT_TRUE(std::isnan(got[0][1][2][3].item<float>()));
  EXPECT_TRUE(torch::equal(got.nan_to_num(-7),
                           torch::relu(y.to(torch::kFloat) + b.view({1, 4, 1, 1})).to(torch::kBFloat16).nan_to_num(-7)));
  const torch::Tensor up = torch::linspace(-1, 1, got.numel()).view(got.sizes()).to(torch::kBFloat16);
  (got * up).sum().backward();
  (want * up).sum().backward();
  EXPECT_TRUE(torch::equal(y1.grad(), y2.grad()));
  EXPECT_TRUE(torch::equal(b1.grad(), b2.grad()));
}

TEST(ChannelBias, WrongShapesAreNamed) {
  EXPECT_THROW(
      {
        try {
          add_channel_bias(torch::zeros({2, 3, 4, 4}), torch::zeros({4}));
        } catch (const std::exception& e) {
          EXPECT_NE(std::string(e.what()).find("add_channel_bias: expected N x C x H x W and a bias of C"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      std::exception);
}

// fold_3x3_taps as one [out * in, 9] x [9, rows^2] product against T W T^T per (out, in) pair,
// in double for both callers' tap matrices (4 and 2 rows; their entries are 0, 1/2 and 1, so the
// products are exact and only the summation order differs), NCHW and channels-last weights, and
// its gradient in double.
TEST(FoldTaps, OneProductEqualsTWTtPerPair) {
  torch::manual_seed(24);
  const std::vector<std::vector<double>> tap_sets = {
      {0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5},
      {1.0, 0.0, 0.0, 0.0, 1.0, 1.0}};
  for (const auto& taps : tap_sets) {
    const int64_t rows = static_cast<int64_t>(taps.size()) / 3;
    const torch::Tensor t = torch::tensor(taps, torch::kDouble).view({rows, 3});
    for (const bool cl : {false, true}) {
      torch::Tensor w = torch::randn({5, 3, 3, 3}, torch::kDouble);
      if (cl) w = w.contiguous(torch::MemoryFormat::ChannelsLast);
      const torch::Tensor got = taps.size() == 12
                                    ? fold_3x3_taps(w, {0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5}, "t")
                                    : fold_3x3_taps(w, {1.0, 0.0, 0.0, 0.0, 1.0, 1.0}, "t");
      ASSERT_EQ(got.sizes(), (std::vector<int64_t>{5, 3, rows, rows}));
      for (int64_t o = 0; o < 5; ++o)
        for (int64_t i = 0; i < 3; ++i)
          EXPECT_TRUE(torch::allclose(got[o][i], t.mm(w[o][i]).mm(t.t()), 1e-14, 1e-14)) << o << " " << i;
    }
  }
  torch::Tensor w = torch::randn({2, 3, 3, 3}, torch::kDouble).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return fold_3x3_taps(w, {1.0, 0.0, 0.0, 0.0, 1.0, 1.0}, "t"); }, {w}));
}

}  // namespace test_layers
