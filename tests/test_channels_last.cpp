// Channels-last storage changes strides, never results: every context module inside a full
// G and D gives the same images, D outputs and parameter gradients with NHWC weights and
// images as with NCHW, and a channels-last Trainer step matches the default one.
// The model comparison runs in double (rtol 1e-9, atol 1e-10 against
// outputs and gradients of order 1): in fp32 the batch-norm
// backward cancels enough that NCHW and NHWC kernels, which sum in different orders, differ
// by 1e-3 relative in G's gradients, which would hide a real layout bug.
#include <gtest/gtest.h>

#include <sstream>

#include "gan/config/config.h"
#include "gan/data/synthetic.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/models/memory_format.h"
#include "gan/train/trainer.h"
#include "layers/context/context.h"
#include "support/module_check.h"
#include "support/oracle.h"

namespace test_channels_last {

using namespace hamgan;
using hamgan::test::close;

namespace {

Config config_with(const std::string& type) {
  std::ostringstream y;
  y << "model: {resolution: 32, n_classes: 5, image_channels: 3}\n"
    << "generator: {ch: 8, z_dim: 16, context: {type: " << type << ", resolution: 32}}\n"
    << "discriminator: {ch: 8, context: {type: " << type << ", resolution: 16}}\n"
    << "train: {batch_size: 4, ema_start: 0, seed: 3, amp: false, channels_last: false}\n";
  return parse_config(y.str(), "test config");
}

// Context modules start as identities (zero gate); open every scalar gate so they matter.
void open_gates(torch::nn::Module& m) {
  torch::NoGradGuard ng;
  for (auto& p : m.parameters())
    if (p.numel() == 1) p.fill_(0.5);
}

void copy_state(torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard ng;
  const auto a = from.named_parameters(), b = to.named_parameters();
  for (const auto& kv : a) b[kv.key()].copy_(kv.value());
  const auto ab = from.named_buffers(), bb = to.named_buffers();
  for (const auto& kv : ab) bb[kv.key()].copy_(kv.value());
}

bool any_channels_last(torch::nn::Module& m) {
  for (auto& p : m.parameters())
    if (p.dim() == 4 && p.size(1) > 1 && p.size(2) * p.size(3) > 1 &&
        p.is_contiguous(torch::MemoryFormat::ChannelsLast) && !p.is_contiguous())
      return true;
  return false;
}

}  // namespace

TEST(ChannelsLast, EveryContextModuleInsideGAndD) {
  for (const auto& type : context_names()) {
    SCOPED_TRACE(type);
    const Config cfg = config_with(type);
    torch::manual_seed(1);
    Generator g(cfg.model, cfg.generator), g2(cfg.model, cfg.generator);
    Discriminator d(cfg.model, cfg.discriminator), d2(cfg.model, cfg.discriminator);
    for (torch::nn::Module* m : {(torch::nn::Module*)g.get(), (torch::nn::Module*)g2.get(),
                                 (torch::nn::Module*)d.get(), (torch::nn::Module*)d2.get()})
      m->to(torch::kDouble);
    open_gates(*g), open_gates(*d);
    copy_state(*g, *g2), copy_state(*d, *d2);
    to_channels_last(*g2), to_channels_last(*d2);
    ASSERT_TRUE(any_channels_last(*g2));
    ASSERT_TRUE(any_channels_last(*d2));

    const auto f64 = torch::kDouble;
    const torch::Tensor z = torch::randn({4, 16}, f64), y = torch::tensor({0, 4, 2, 1});
    const torch::Tensor x = torch::rand({4, 3, 32, 32}, f64) * 2 - 1;
    torch::Tensor outs[2][2];
    int k = 0;
    for (auto [gm, dm] : {std::pair{g, d}, std::pair{g2, d2}}) {
      torch::manual_seed(7);  // modules that draw random bases draw the same ones
      const torch::Tensor img = gm->forward(z, y);
      torch::Tensor xr = k == 0 ? x : x.contiguous(torch::MemoryFormat::ChannelsLast);
      const torch::Tensor o = dm->forward(torch::cat({xr, img}), torch::cat({y, y}));
      (o * torch::arange(1, 9, f64).view({8, 1})).sum().backward();
      outs[k][0] = img.detach().contiguous(), outs[k][1] = o.detach();
      ++k;
    }
    EXPECT_TRUE(close(outs[1][0], outs[0][0], 1e-9, 1e-10));
    EXPECT_TRUE(close(outs[1][1], outs[0][1], 1e-9, 1e-10));
    test::expect_same_grads(*g, *g2, 1e-9, 1e-10);
    test::expect_same_grads(*d, *d2, 1e-9, 1e-10);
  }
}

// One step through the real Trainer in fp32: the layout is applied to G, D and EMA G, and the
// step's losses and mean D outputs agree (rtol 1e-4, atol 1e-5). Gradients are compared in
// double above; here they would differ by rounding amplified through batch norm and Adam.
TEST(ChannelsLast, TrainerStepMatchesTheDefaultLayout) {
  Config a = config_with("ham_nmf"), b = a;
  b.train.channels_last = true;
  auto data = std::make_shared<SyntheticDataset>(64, 32, 3, 5, 0);
  Trainer ta(a, torch::kCPU), tb(b, torch::kCPU);
  DatasetSource sa(data, ta.micro_batch(), 0), sb(data, tb.micro_batch(), 0);
  ASSERT_FALSE(any_channels_last(*ta.g()));
  ASSERT_TRUE(any_channels_last(*tb.g()));
  ASSERT_TRUE(any_channels_last(*tb.d()));
  ASSERT_TRUE(any_channels_last(**tb.g_ema()));
  ta.step(sa), tb.step(sb);
  EXPECT_TRUE(close(tb.stats(), ta.stats(), 1e-4, 1e-5));
}

}  // namespace test_channels_last
