// Full G and D against the Python reference (oracle/models.py): forward in train and
// eval mode at 32/64/128, shared embedding + hierarchical z, D gradients with respect to
// input and every weight, and parameter counts of configs/imagenet128_sagan.yaml.
#include <gtest/gtest.h>

#include "core/error.h"
#include "gan/config/config.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "support/oracle.h"

namespace test_models {

using namespace hamgan;
using namespace hamgan::test;

namespace {

constexpr double kRtol = 1e-4, kAtol = 2e-5;  // fp32 through 4-6 residual blocks

Config small_config(int64_t res, int64_t ch, int64_t classes, int64_t z, int64_t chans,
                    int64_t g_ctx, int64_t d_ctx, const std::string& extra = "", const std::string& d_extra = "") {
  std::ostringstream y;
  y << "model: {resolution: " << res << ", n_classes: " << classes << ", image_channels: " << chans
    << "}\ngenerator: {ch: " << ch << ", z_dim: " << z << extra
    << ", context: {type: self_attention, resolution: " << g_ctx << "}}\n"
    << "discriminator: {ch: " << ch << d_extra << ", context: {type: self_attention, resolution: " << d_ctx << "}}\n";
  return parse_config(y.str(), "test config");
}

void check_g(const Config& cfg, const std::string& file) {
  const TensorMap d = load_tensors(oracle_path(file));
  Generator g(cfg.model, cfg.generator);
  load_state_dict(*g, with_prefix(d, "init"), file);
  torch::NoGradGuard ng;
  g->train();
  EXPECT_TRUE(close(g->forward(get(d, "z"), get(d, "y")), get(d, "train.x"), kRtol, kAtol)) << file;
  const TensorMap after = with_prefix(d, "after");
  for (const auto& kv : g->named_buffers())
    EXPECT_TRUE(close(kv.value(), get(after, kv.key()), kRtol, kAtol)) << file << " " << kv.key();
  g->eval();
  EXPECT_TRUE(close(g->forward(get(d, "z"), get(d, "y")), get(d, "eval.x"), kRtol, kAtol)) << file;
}

void check_d(const Config& cfg, const std::string& file) {
  const TensorMap d = load_tensors(oracle_path(file));
  Discriminator dis(cfg.model, cfg.discriminator);
  load_state_dict(*dis, with_prefix(d, "init"), file);
  dis->train();
  torch::Tensor x = get(d, "x").clone().requires_grad_(true);
  const torch::Tensor out = dis->forward(x, get(d, "y"));
  out.sum().backward();
  EXPECT_TRUE(close(out, get(d, "train.out"), kRtol, 1e-3)) << file;  // logits are sums of ~1e3 terms
  EXPECT_TRUE(close(x.grad(), get(d, "train.grad_x"), kRtol, kAtol)) << file << " grad x";
  for (const auto& kv : dis->named_parameters())
    EXPECT_TRUE(close(kv.value().grad(), get(d, "train.grad." + kv.key()), kRtol, 1e-4))
        << file << " grad " << kv.key();
  dis->eval();
  torch::NoGradGuard ng;
  EXPECT_TRUE(close(dis->forward(x.detach(), get(d, "y")), get(d, "eval.out"), kRtol, 1e-3)) << file;
}

}  // namespace

TEST(Generator, Res32MatchesReference) { check_g(small_config(32, 4, 5, 16, 1, 32, 16), "g32.pt"); }
TEST(Generator, Res64SharedHierMatchesReference) {
  check_g(small_config(64, 2, 5, 20, 3, 16, 32, ", shared_dim: 6, hier: true"), "g64_hier.pt");
}
TEST(Generator, Res128MatchesReference) { check_g(small_config(128, 2, 3, 12, 3, 32, 32), "g128.pt"); }
TEST(Discriminator, Res32MatchesReference) { check_d(small_config(32, 4, 5, 16, 1, 32, 16), "d32.pt"); }
TEST(Discriminator, Res64MatchesReference) { check_d(small_config(64, 8, 5, 20, 3, 16, 32), "d64.pt"); }
TEST(Discriminator, MinibatchStdMatchesReference) {
  check_d(small_config(32, 4, 5, 16, 1, 32, 16, "", ", mbstd_group: 2, mbstd_features: 2"), "d32_mbstd.pt");
}
TEST(Generator, ChannelMultipliersMatchReference) {
  check_g(small_config(32, 4, 5, 16, 1, 32, 16, ", ch_mult: [4, 4, 4, 2]"), "g32_mult.pt");
}
TEST(Discriminator, ChannelMultipliersMatchReference) {
  check_d(small_config(32, 4, 5, 16, 1, 32, 16, "", ", ch_mult: [2, 4, 4, 4]"), "d32_mult.pt");
}
// The trainer's one D pass over [real; fake] equals two passes when the micro-batch is a multiple
// of the group (gan/config/config.cpp requires it), and a straddling group would not.
TEST(Discriminator, MinibatchStdGroupsNeverMixRealAndFake) {
  torch::manual_seed(13);
  const Config c = small_config(32, 4, 5, 16, 1, 32, 16, "", ", mbstd_group: 4");
  Discriminator d(c.model, c.discriminator);
  d->eval();
  torch::NoGradGuard ng;
  const torch::Tensor real = torch::randn({8, 1, 32, 32}), fake = torch::randn({8, 1, 32, 32}) * 0.1;
  const torch::Tensor y = torch::randint(0, 5, {16}, torch::kLong);
  const torch::Tensor both = d->forward(torch::cat({real, fake}), y);
  EXPECT_TRUE(close(both.narrow(0, 0, 8), d->forward(real, y.narrow(0, 0, 8)), 1e-5, 1e-5));
  EXPECT_TRUE(close(both.narrow(0, 8, 8), d->forward(fake, y.narrow(0, 8, 8)), 1e-5, 1e-5));
  // 6 real then 6 fake: the second group holds 2 real and 2 fake images, and D's outputs show it.
  const torch::Tensor mixed = d->forward(torch::cat({real.narrow(0, 0, 6), fake.narrow(0, 0, 6)}), y.narrow(0, 0, 12));
  EXPECT_FALSE(close(mixed.narrow(0, 4, 2), d->forward(real.narrow(0, 4, 2), y.narrow(0, 4, 2)), 1e-3, 1e-3));
}

TEST(Discriminator, Res128MatchesReference) { check_d(small_config(128, 8, 3, 12, 3, 32, 32), "d128.pt"); }

TEST(Models, ImageNet128SaganParameterCountsMatchReference) {
  const TensorMap d = load_tensors(oracle_path("counts.pt"));
  const Config cfg = load_config(source_path("configs/imagenet128_sagan.yaml"));
  Generator g(cfg.model, cfg.generator);
  Discriminator dis(cfg.model, cfg.discriminator);
  EXPECT_EQ(count_params(*g), get(d, "imagenet128_sagan.G").item<int64_t>());
  EXPECT_EQ(count_params(*dis), get(d, "imagenet128_sagan.D").item<int64_t>());
}

TEST(Models, StrictLoadReportsMissingUnexpectedAndMisshapedKeys) {
  const Config cfg = small_config(32, 4, 5, 16, 1, 32, 16);
  Discriminator dis(cfg.model, cfg.discriminator);
  TensorMap sd = state_dict(*dis);
  sd.erase("linear.bias");
  sd["bogus.weight"] = torch::zeros({1});
  sd["embed.weight_orig"] = torch::zeros({3, 3});
  try {
    load_state_dict(*dis, sd, "ck.pt");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("ck.pt"), std::string::npos) << m;
    EXPECT_NE(m.find("missing key 'linear.bias'"), std::string::npos) << m;
    EXPECT_NE(m.find("unexpected key 'bogus.weight'"), std::string::npos) << m;
    EXPECT_NE(m.find("key 'embed.weight_orig': expected shape [5, 16], got [3, 3]"), std::string::npos) << m;
  }
}

}  // namespace test_models
