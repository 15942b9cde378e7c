// bf16 autocast on the CPU (train.amp): compat::Autocast's scope, the mode's meaning (auto,
// true, false), the parts kept in fp32 (spectral-norm sigma, batch norm, the Hamburger's
// decomposition, the losses), and G/D forward+backward and Trainer steps against fp32.
//
// Tolerance: bf16 keeps 8 significant bits (unit roundoff 2^-9 = 0.2%). Each conv or matmul
// rounds its inputs to bf16 and accumulates in fp32, so each adds a relative error of a few
// tenths of a percent; through G (9 convs and a linear) and D (10 convs) and back, roughly
// independent roundings of ~30 layers add to a few percent in L2. We require a relative L2
// error (|a - b| / |b|) of at most 5% on D's outputs and on all of D's parameter gradients.
// G's gradients come back through D and then G's batch norms, whose backward subtracts nearly
// equal terms (test_channels_last: summation order alone moves them 1e-3 relative in fp32),
// so the same roundings reach ~6-10% there (measured); we bound them at 15%. Both gradients
// must point the way fp32's do (cosine >= 0.99).
#include <gtest/gtest.h>

#include <sstream>

#include "core/compat.h"
#include "core/cpu_features.h"
#include "gan/config.h"
#include "gan/data/synthetic.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/train/amp.h"
#include "gan/train/trainer.h"
#include "layers/context/hamburger.h"
#include "layers/context/nmf.h"
#include "layers/spectral_norm.h"
#include "layers/sync_batch_norm.h"
#include "support/oracle.h"

using namespace hamgan;

namespace {

constexpr double kRelTol = 0.05, kRelTolG = 0.15, kMinCosine = 0.99;

double rel_err(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a.to(torch::kDouble) - b.to(torch::kDouble)).norm() / b.to(torch::kDouble).norm())
      .item<double>();
}
double cosine(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor x = a.to(torch::kDouble).flatten(), y = b.to(torch::kDouble).flatten();
  return (x.dot(y) / (x.norm() * y.norm())).item<double>();
}

Config config_with(const std::string& g_ctx, const std::string& d_ctx, const std::string& amp) {
  std::ostringstream y;
  y << "model: {resolution: 32, n_classes: 5, image_channels: 1}\n"
    << "generator: {ch: 8, z_dim: 16, context: {type: " << g_ctx << ", resolution: 32}}\n"
    << "discriminator: {ch: 8, context: {type: " << d_ctx << ", resolution: 16}}\n"
    << "train: {batch_size: 8, ema_start: 0, seed: 3, device: cpu, amp: " << amp << "}\n";
  return parse_config(y.str(), "test config");
}

// Context modules start as identities (zero gate); open every scalar gate so they matter.
void open_gates(torch::nn::Module& m) {
  torch::NoGradGuard ng;
  for (auto& p : m.parameters())
    if (p.numel() == 1) p.fill_(0.5);
}

torch::Tensor all_grads(torch::nn::Module& m) {
  std::vector<torch::Tensor> g;
  for (auto& p : m.parameters()) {
    EXPECT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().scalar_type(), torch::kFloat);
    g.push_back(p.grad().flatten());
  }
  return torch::cat(g);
}

// An NMF that records the dtypes its one_step solve is given and returns.
class RecordingNMF : public NMF {
 public:
  RecordingNMF() : NMF(NMFOptions{}) {}
  Decomposed solve_one_step(const torch::Tensor& raw, const torch::Tensor& bases0,
                            int64_t steps) const override {
    raw_dtype = raw.scalar_type();
    Decomposed m = NMF::solve_one_step(raw, bases0, steps);
    seen = {bases0.scalar_type(), m.bases.scalar_type(), m.coef.scalar_type()};
    return m;
  }
  mutable torch::ScalarType raw_dtype = torch::kFloat;
  mutable std::vector<torch::ScalarType> seen;
};

}  // namespace

TEST(Amp, AutocastScopeCastsConvolutionsAndRestores) {
  const torch::Tensor x = torch::randn({2, 3, 8, 8}), w = torch::randn({4, 3, 3, 3});
  EXPECT_EQ(torch::conv2d(x, w).scalar_type(), torch::kFloat);
  {
    compat::Autocast on(true, torch::kCPU);
    EXPECT_EQ(torch::conv2d(x, w).scalar_type(), torch::kBFloat16);
    {
      compat::Autocast off(false, torch::kCPU);  // disabled: a no-op, still bf16
      EXPECT_EQ(torch::conv2d(x, w).scalar_type(), torch::kBFloat16);
    }
    {
      compat::Autocast nested(true, torch::kCPU);
      EXPECT_EQ(torch::mm(x.view({-1, 8}), torch::randn({8, 2})).scalar_type(), torch::kBFloat16);
    }
    EXPECT_EQ(torch::conv2d(x, w).scalar_type(), torch::kBFloat16);  // still on after nesting
  }
  EXPECT_EQ(torch::conv2d(x, w).scalar_type(), torch::kFloat);
  {
    compat::Autocast cuda_only(true, torch::kCUDA);  // CUDA autocast leaves CPU ops alone
    EXPECT_EQ(torch::conv2d(x, w).scalar_type(), torch::kFloat);
  }
}

TEST(Amp, ModeAutoMeansCudaOrNativeCpuBf16) {
  EXPECT_FALSE(amp_enabled("false", torch::kCPU));
  EXPECT_TRUE(amp_enabled("true", torch::kCPU));
  EXPECT_EQ(amp_enabled("auto", torch::kCPU), cpu_has_fast_bf16());
  EXPECT_TRUE(amp_enabled("auto", torch::Device(torch::kCUDA, 0)));
  EXPECT_FALSE(amp_enabled("false", torch::Device(torch::kCUDA, 0)));
  EXPECT_THROW(amp_enabled("yes", torch::kCPU), std::exception);
  EXPECT_TRUE(cpuinfo_has_fast_bf16("processor\t: 0\nflags\t\t: fpu avx512f avx512_bf16 x\n"));
  EXPECT_TRUE(cpuinfo_has_fast_bf16("flags\t: sse amx_bf16 amx_tile\nflags\t: sse\n"));
  EXPECT_FALSE(cpuinfo_has_fast_bf16("flags\t: fpu avx512f avx512_bf16x avx2\n"));
  EXPECT_FALSE(cpuinfo_has_fast_bf16("model name\t: avx512_bf16\n"));  // only the flags line
  EXPECT_FALSE(cpuinfo_has_fast_bf16(""));
  // The config key: auto by default, the three words accepted, anything else named.
  EXPECT_EQ(config_with("none", "none", "auto").train.amp, "auto");
  EXPECT_EQ(config_with("none", "none", "false").train.amp, "false");
  EXPECT_EQ(parse_config("train: {}", "c").train.amp, "auto");
  try {
    config_with("none", "none", "bf16");
    ADD_FAILURE() << "amp: bf16 accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("amp"), std::string::npos) << e.what();
  }
}

TEST(Amp, Fp32PartsStayFp32UnderAutocast) {
  torch::manual_seed(0);
  compat::Autocast bf16(true, torch::kCPU);
  // Spectral norm: sigma and the normalised weight in fp32; the conv itself in bf16.
  SNConv2d conv(3, 4, 3, 1, true, SNOptions{1e-6, 1});
  const torch::Tensor x = torch::randn({2, 3, 8, 8});
  EXPECT_EQ(conv->weight().scalar_type(), torch::kFloat);
  EXPECT_EQ(conv->weight_u.scalar_type(), torch::kFloat);
  const torch::Tensor h = conv->forward(x);
  EXPECT_EQ(h.scalar_type(), torch::kBFloat16);
  // Batch norm: statistics from the bf16 activations computed in fp32, fp32 out.
  torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(4).momentum(1.0));
  const torch::Tensor y = batch_norm_2d(*bn, h, nullptr);
  EXPECT_EQ(y.scalar_type(), torch::kFloat);
  EXPECT_EQ(bn->running_mean.scalar_type(), torch::kFloat);
  const torch::Tensor hf = h.to(torch::kFloat);
  EXPECT_TRUE(test::close(bn->running_mean, hf.mean({0, 2, 3}), 1e-5, 1e-6));
  EXPECT_TRUE(test::close(y, torch::batch_norm(hf, {}, {}, {}, {}, true, 0.1, 1e-5, false), 1e-4, 1e-4));
  // The Hamburger: its bread may run in bf16; the decomposition takes the bf16 lower-bread
  // output and computes in fp32 (D0, D and C fp32; test_nmf_cpu checks the values are fp32's).
  auto opt = std::make_shared<HamburgerOptions>();
  auto nmf = std::make_shared<RecordingNMF>();
  opt->ham = nmf;
  ContextSpec spec;
  spec.channels = 16;
  spec.height = spec.width = 8;
  spec.cond = CondSpec{CondKind::labels, 3};
  spec.options = opt;
  HamburgerImpl ham(spec);
  const torch::Tensor out = ham.forward(torch::randn({2, 16, 8, 8}), torch::tensor({0, 2}));
  EXPECT_EQ(out.scalar_type(), torch::kFloat);
  EXPECT_EQ(nmf->raw_dtype, torch::kBFloat16);
  ASSERT_EQ(nmf->seen.size(), 3u);
  for (auto t : nmf->seen) EXPECT_EQ(t, torch::kFloat);
}

namespace {

// G and D from one seed, G -> D -> mean, backward; D's outputs and all gradients.
struct Pass {
  torch::Tensor out, g_grads, d_grads;
};
Pass forward_backward(const Config& cfg, bool amp) {
  torch::manual_seed(11);
  Generator g(cfg.model, cfg.generator);
  Discriminator d(cfg.model, cfg.discriminator);
  open_gates(*g);
  open_gates(*d);
  const torch::Tensor z = torch::randn({8, 16}), y = torch::randint(5, {8});
  torch::manual_seed(12);  // the Hamburger's random bases
  torch::Tensor out;
  {
    compat::Autocast bf16(amp, torch::kCPU);
    out = d->forward(g->forward(z, y), y);
  }
  EXPECT_EQ(out.scalar_type(), torch::kFloat);  // the fp32 projection term promotes it
  (out * torch::linspace(-1, 1, 8)).sum().backward();
  return {out.detach(), all_grads(*g), all_grads(*d)};
}

}  // namespace

TEST(Amp, GeneratorAndDiscriminatorForwardBackwardCloseToFp32) {
  for (const char* ctx : {"none", "self_attention", "ham_nmf"}) {
    SCOPED_TRACE(ctx);
    const Config cfg = config_with(ctx, ctx, "false");
    const Pass f = forward_backward(cfg, false), b = forward_backward(cfg, true);
    EXPECT_LE(rel_err(b.out, f.out), kRelTol);
    EXPECT_LE(rel_err(b.g_grads, f.g_grads), kRelTolG);
    EXPECT_LE(rel_err(b.d_grads, f.d_grads), kRelTol);
    EXPECT_GE(cosine(b.g_grads, f.g_grads), kMinCosine);
    EXPECT_GE(cosine(b.d_grads, f.d_grads), kMinCosine);
    EXPECT_GT(rel_err(b.out, f.out), 0.0);  // bf16 really ran
  }
}

// Two Trainer steps with amp true and false from one seed: the losses and mean D outputs of
// each step agree to the bf16 tolerance, and parameters, gradients and Adam's state stay fp32.
TEST(Amp, TrainerStepsCloseToFp32) {
  auto data = std::make_shared<SyntheticDataset>(64, 32, 1, 5, 0);
  Trainer tf(config_with("ham_nmf", "self_attention", "false"), torch::kCPU);
  Trainer tb(config_with("ham_nmf", "self_attention", "true"), torch::kCPU);
  ASSERT_FALSE(tf.amp());
  ASSERT_TRUE(tb.amp());
  DatasetSource sf(data, tf.micro_batch(), 0), sb(data, tb.micro_batch(), 0);
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    tf.step(sf), tb.step(sb);
    EXPECT_EQ(tb.stats().scalar_type(), torch::kFloat);
    EXPECT_LE(rel_err(tb.stats(), tf.stats()), kRelTol) << tb.stats() << tf.stats();
  }
  for (auto* m : {static_cast<torch::nn::Module*>(tb.g().get()), static_cast<torch::nn::Module*>(tb.d().get())}) {
    for (const auto& p : m->parameters()) {
      EXPECT_EQ(p.scalar_type(), torch::kFloat);
      EXPECT_TRUE(torch::isfinite(p).all().item<bool>());
    }
    for (const auto& b : m->buffers()) EXPECT_NE(b.scalar_type(), torch::kBFloat16);
  }
}
