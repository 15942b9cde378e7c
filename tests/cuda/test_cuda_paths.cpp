// The CUDA paths on a GPU (scripts/gpu_check.sh registers this with -DHAMGAN_TEST_CUDA=ON;
// it fails without a GPU). Same results as on the CPU where the arithmetic is the same
// (double, TF32 off), bf16 under autocast, checkpoints portable between CUDA and CPU, exact
// CUDA resume (the GPU RNG state feeds NMF's random bases), pinned loader batches.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/compat.h"
#include "core/device.h"
#include "core/state_dict.h"
#include "gan/data/synthetic.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/train/trainer.h"
#include "layers/context/context.h"
#include "layers/conv_avgpool.h"
#include "layers/fold_taps.h"
#include "layers/upsample_conv.h"
#include "support/cli.h"
#include "support/state_dicts.h"

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

const torch::Device kGpu(torch::kCUDA, 0);

Config tiny(const std::string& context) {
  return parse_config(
      "model: {resolution: 32, n_classes: 3, image_channels: 1}\n"
      "generator: {ch: 4, z_dim: 8, context: {type: " + context + ", resolution: 16}}\n"
      "discriminator: {ch: 4, context: {type: " + context + ", resolution: 16}}\n"
      "train: {batch_size: 4, device: cuda, ema_start: 0, amp: false}\n",
      "tiny cuda config");
}

TensorMap on_cpu(const TensorMap& m) {
  TensorMap out;
  for (const auto& [k, v] : m) out[k] = v.cpu();
  return out;
}

class Cuda : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(torch::cuda::is_available()) << "the GPU tests need a GPU";
    at::globalContext().setAllowTF32CuDNN(false);  // fp32 means fp32 here
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setDeterministicCuDNN(true);
  }
};

}  // namespace

TEST_F(Cuda, DeviceSelection) {
  EXPECT_TRUE(compat::cuda_compiled());
  EXPECT_EQ(resolve_device("cuda"), kGpu);
  EXPECT_EQ(resolve_device("auto"), kGpu);
}

// G and D forward in double: the GPU computes what the CPU computes.
TEST_F(Cuda, ForwardMatchesCpu) {
  const Config cfg = tiny("self_attention");
  torch::manual_seed(1);
  Generator g(cfg.model, cfg.generator);
  Discriminator d(cfg.model, cfg.discriminator);
  g->to(torch::kDouble), d->to(torch::kDouble);
  g->eval(), d->eval();
  const auto z = torch::randn({4, 8}, torch::kDouble);
  const auto y = torch::tensor({0, 1, 2, 0}, torch::kLong);
  torch::NoGradGuard ng;
  const auto x_cpu = g->forward(z, y), o_cpu = d->forward(x_cpu, y);
  g->to(kGpu), d->to(kGpu);
  const auto x_gpu = g->forward(z.to(kGpu), y.to(kGpu));
  const auto o_gpu = d->forward(x_gpu, y.to(kGpu));
  EXPECT_TRUE(torch::allclose(x_gpu.cpu(), x_cpu, 1e-10, 1e-12));
  EXPECT_TRUE(torch::allclose(o_gpu.cpu(), o_cpu, 1e-10, 1e-12));
}

// train.folded_convs=true on a GPU: D's conv + pool and its shortcut's pool + 1x1 conv each as
// one stride-2 convolution and G's upsample + conv as the sub-pixel convolution equal the plain
// forms in double, values and gradients (input, weight and bias), channels-last as the trainer
// runs them.
TEST_F(Cuda, FoldedConvsEqualPlainFormsForwardAndBackward) {
  const auto opt = torch::TensorOptions().dtype(torch::kDouble).device(kGpu);
  torch::manual_seed(3);
  for (const bool up : {false, true}) {
    const auto x = torch::randn({2, 5, 8, 8}, opt).contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_();
    const auto w = torch::randn({6, 5, 3, 3}, opt).requires_grad_(), b = torch::randn({6}, opt).requires_grad_();
    const auto folded = up ? upsample2_conv3x3(x, w, b) : conv3x3_avgpool2(x, w, b);
    const auto plain = up ? torch::conv2d(torch::upsample_nearest2d(x, {16, 16}), w, b, 1, 1)
                          : torch::avg_pool2d(torch::conv2d(x, w, b, 1, 1), {2, 2});
    ASSERT_EQ(folded.sizes(), plain.sizes()) << (up ? "upsample" : "pool");
    EXPECT_TRUE(torch::allclose(folded, plain, 1e-10, 1e-12)) << (up ? "upsample" : "pool");
    const auto dy = torch::randn_like(plain);
    const auto gf = torch::autograd::grad({folded}, {x, w, b}, {dy});
    const auto gp = torch::autograd::grad({plain}, {x, w, b}, {dy});
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(torch::allclose(gf[i], gp[i], 1e-10, 1e-12)) << (up ? "upsample " : "pool ") << i;
  }
  const auto x = torch::randn({2, 5, 8, 8}, opt).contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_();
  const auto w = torch::randn({6, 5, 1, 1}, opt).requires_grad_(), b = torch::randn({6}, opt).requires_grad_();
  const auto folded = avgpool2_conv1x1(x, w, b), plain = torch::conv2d(torch::avg_pool2d(x, {2, 2}), w, b);
  ASSERT_EQ(folded.sizes(), plain.sizes()) << "shortcut";
  EXPECT_TRUE(torch::allclose(folded, plain, 1e-10, 1e-12)) << "shortcut";
  const auto dy = torch::randn_like(plain);
  const auto gf = torch::autograd::grad({folded}, {x, w, b}, {dy});
  const auto gp = torch::autograd::grad({plain}, {x, w, b}, {dy});
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(torch::allclose(gf[i], gp[i], 1e-10, 1e-12)) << "shortcut " << i;
}

// bf16 autocast on CUDA: convolutions run in bf16, SN's sigma stays fp32, a step stays finite.
TEST_F(Cuda, AutocastBf16) {
  const auto w = torch::randn({8, 4, 3, 3}, kGpu), x = torch::randn({2, 4, 8, 8}, kGpu);
  {
    compat::Autocast ac(true, torch::kCUDA);
    EXPECT_EQ(torch::conv2d(x, w).scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(torch::conv2d(x, w).scalar_type(), torch::kFloat);  // restored on exit
  Config cfg = tiny("ham_nmf");
  cfg.train.amp = AmpMode::On;
  Trainer t(cfg, kGpu);
  ASSERT_TRUE(t.amp());
  auto data = std::make_shared<SyntheticDataset>(16, 32, 1, 3, 7);
  DatasetSource src(data, 4, 11);
  for (int i = 0; i < 3; ++i) t.step(src);
  EXPECT_TRUE(torch::isfinite(t.stats()).all().item<bool>());
}

// A CUDA run's checkpoint (with "cuda_default") restores on the CPU, a CPU run's on CUDA, and a
// CUDA run resumed on CUDA continues exactly: NMF's bases come from the GPU generator.
TEST_F(Cuda, CheckpointsPortableAndResumeExact) {
  const Config cfg = tiny("ham_nmf");
  auto data = std::make_shared<SyntheticDataset>(16, 32, 1, 3, 7);
  DatasetSource src(data, 4, 11);
  Trainer a(cfg, kGpu);
  a.step(src);
  const std::string dir = test::fresh_dir("cuda", "ckpt");
  fs::create_directories(dir);
  a.save(dir + "/a.pt", src.state());
  a.step(src);
  const TensorMap next = on_cpu(state_dict(*a.g()));

  const CheckpointData on_gpu = load_checkpoint(dir + "/a.pt", kGpu);
  ASSERT_TRUE(on_gpu.find_rng_state("cuda_default").has_value());
  Trainer b(cfg, kGpu);
  b.restore(on_gpu);
  DatasetSource sb(data, 4, 11, on_gpu.loader);
  b.step(sb);
  EXPECT_TRUE(test::identical(on_cpu(state_dict(*b.g())), next));

  Config cpu_cfg = cfg;
  cpu_cfg.train.device = DeviceChoice::Cpu;
  Trainer c(cpu_cfg, torch::kCPU);
  c.restore(load_checkpoint(dir + "/a.pt", torch::kCPU));
  Trainer c_gpu(cfg, kGpu);
  c.save(dir + "/c.pt", src.state());
  c_gpu.restore(load_checkpoint(dir + "/c.pt", kGpu));
  EXPECT_TRUE(test::identical(on_cpu(state_dict(*c_gpu.d())), state_dict(*c.d())));
}

// Pinned batches from the loader, copied without blocking.
TEST_F(Cuda, PinnedLoader) {
  LoaderOptions o;
  o.batch_size = 8;
  o.pin_memory = true;
  Loader l(std::make_shared<SyntheticDataset>(32, 32, 1, 3, 7), o);
  const Batch b = l.next();
  EXPECT_TRUE(b.images.is_pinned());
  EXPECT_TRUE(b.labels.is_pinned());
  const auto x = b.images.to(kGpu, /*non_blocking=*/true);
  torch::cuda::synchronize();
  EXPECT_TRUE(torch::equal(x.cpu(), b.images));
}

// G's residual add with the upsampling joined (layers/upsample_conv.h) sums exactly as
// upsample-then-add on the GPU too, in bf16 channels-last, and the auto policy takes it there.
TEST_F(Cuda, AddUpsampledEqualsUpsampleThenAdd) {
  namespace F = torch::nn::functional;
  const torch::Tensor h =
      torch::randn({8, 16, 32, 32}, kGpu).to(torch::kBFloat16).contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor s =
      torch::randn({8, 16, 16, 16}, kGpu).to(torch::kBFloat16).contiguous(torch::MemoryFormat::ChannelsLast);
  const torch::Tensor up =
      F::interpolate(s, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest));
  const torch::Tensor y = add_upsampled2(h, s);
  EXPECT_TRUE(torch::equal(y, h + up));
  EXPECT_TRUE(y.is_contiguous(torch::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(folded_shortcut_pays(s));
}

// train.tf32: the trainer sets cuBLAS's TF32 mode as the config says (auto: with autocast), and
// the mode does what it is for: an fp32 batched product (the decomposition's kind) errs by TF32's
// ~1e-4 with it and by fp32's ~1e-7 without.
TEST_F(Cuda, Tf32FollowsTheConfig) {
  for (const auto& [mode, amp, want] : std::vector<std::tuple<Tf32Mode, AmpMode, bool>>{
           {Tf32Mode::Auto, AmpMode::On, true},
           {Tf32Mode::Auto, AmpMode::Off, false},
           {Tf32Mode::On, AmpMode::Off, true},
           {Tf32Mode::Off, AmpMode::On, false}}) {
    Config cfg = tiny("ham_nmf");
    cfg.train.tf32 = mode;
    cfg.train.amp = amp;
    Trainer t(cfg, kGpu);
    EXPECT_EQ(at::globalContext().allowTF32CuBLAS(), want) << static_cast<int>(mode) << " " << static_cast<int>(amp);
  }
  torch::manual_seed(41);
  const torch::Tensor a = torch::randn({16, 256, 512}, kGpu), b = torch::randn({16, 512, 64}, kGpu);
  const torch::Tensor exact = torch::bmm(a.to(torch::kDouble), b.to(torch::kDouble));
  auto rel = [&] { return ((torch::bmm(a, b).to(torch::kDouble) - exact).norm() / exact.norm()).item<double>(); };
  at::globalContext().setAllowTF32CuBLAS(true);
  const double tf32 = rel();
  at::globalContext().setAllowTF32CuBLAS(false);
  const double fp32 = rel();
  EXPECT_LT(fp32, 1e-5);
  EXPECT_GT(tf32, 1e-5) << "TF32 took no effect";
  EXPECT_LT(tf32, 1e-2);
}

// A training step never waits for the device: every synchronisation LibTorch makes (a blocking
// copy to or from the GPU, item(), a synchronize) throws while cuda_sync_errors is on. Each
// registered context module in G and D, bf16 autocast, the folded convolutions and the fused
// kernels as `auto` picks them on CUDA; the first steps (cuDNN's algorithm search, the pinned
// pool's first block) run before the check.
TEST_F(Cuda, TrainingStepNeverWaitsForTheDevice) {
  struct SyncErrors {
    SyncErrors() { compat::cuda_sync_errors(true); }
    ~SyncErrors() { compat::cuda_sync_errors(false); }
  };
  {
    // The check itself: a blocking host-to-device copy of a constant is caught.
    SyncErrors on;
    EXPECT_ANY_THROW(torch::tensor({1.0, 2.0}, torch::TensorOptions().device(kGpu)));
  }
  auto data = std::make_shared<SyntheticDataset>(16, 32, 1, 3, 7);
  for (const std::string& type : context_names()) {
    Config cfg = tiny(type);
    cfg.train.amp = AmpMode::On;
    cfg.train.folded_convs = FoldPolicy::Always;
    Trainer t(cfg, kGpu);
    DatasetSource src(data, 4, 11);
    for (int i = 0; i < 2; ++i) t.step(src);
    {
      SyncErrors on;
      try {
        for (int i = 0; i < 2; ++i) t.step(src);
      } catch (const c10::Error& e) {
        ADD_FAILURE() << type << ": the step waited for the device: " << e.what_without_backtrace();
      }
    }
    EXPECT_TRUE(torch::isfinite(t.stats()).all().item<bool>()) << type;
  }
}
