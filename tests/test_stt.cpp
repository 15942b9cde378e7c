// Tensor synthesizer context modules (layers/context/stt_*.h) against the Python reference
// (oracle/stt.py, written from the STT paper's Eq. 7, 10, 14-23): outputs and gradients
// w.r.t. input and every weight, H != W; double-precision gradchecks of every module and
// mode; config errors; each module inside a full G and D at 32x32; parameter counts.
#include <gtest/gtest.h>

#include <iostream>

#include "support/errors.h"
#include "core/error.h"
#include "gan/config/config.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "layers/context/stt_dense.h"
#include "layers/context/stt_dense_factorized.h"
#include "layers/context/stt_mixture.h"
#include "layers/context/stt_random.h"
#include "layers/context/stt_random_factorized.h"
#include "support/gradcheck.h"
#include "support/module_check.h"
#include "support/oracle.h"

namespace test_stt {

using namespace hamgan;
using hamgan::test::error_of;
using namespace hamgan::test;

namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;  // fp32; matmul chains and softmax reduce in other orders
const SNOptions kSN{1e-6, 1};

template <typename O>
ContextSpec spec(int64_t c, int64_t h, int64_t w, O opt, SNOptions sn = kSN) {
  return ContextSpec{c, h, w, CondSpec{}, 1e-5, sn, std::make_shared<const O>(std::move(opt))};
}

// Builds the module named `type` with options `opt` at C x H x W.
template <typename O>
ContextModule build(const std::string& type, int64_t c, int64_t h, int64_t w, O opt,
                    SNOptions sn = kSN) {
  return context_entry(type).create(spec(c, h, w, std::move(opt), sn));
}

// The shared oracle check (support/module_check.h) on input `in0`.
void check(ContextModule m, const std::string& file) {
  expect_matches_oracle(*m, file, [&](const std::vector<torch::Tensor>& in) { return m->forward(in[0], {}); },
                        {"in0"}, kRtol, kAtol);
}

constexpr int64_t C = 16, H = 6, W = 4;  // the oracle's shape

template <typename O>
O paper(O o) {
  o.projections = Projections::paper;
  return o;
}

// Double-precision gradcheck w.r.t. the input and every parameter (eval mode: SN fixed).
void gradcheck_module(ContextModule m, int64_t h, int64_t w) {
  m->to(torch::kDouble);
  m->eval();
  std::vector<torch::Tensor> leaves;
  {
    torch::NoGradGuard ng;
    for (auto& kv : m->named_parameters()) {
      if (kv.key() == "gamma") kv.value().fill_(0.7);
      leaves.push_back(kv.value());
    }
  }
  torch::Tensor x = torch::randn({2, C, h, w}, torch::kDouble).requires_grad_(true);
  leaves.push_back(x);
  EXPECT_TRUE(gradcheck([&] { return m->forward(x, {}); }, leaves));
}

int64_t count(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

}  // namespace

// --- against the oracle ---

TEST(SttDense, MatchesReference) { check(build("stt_dense", C, H, W, SttDenseOptions{}), "dense.pt"); }
TEST(SttDense, PaperMatchesReference) {
  check(build("stt_dense", C, H, W, paper(SttDenseOptions{})), "dense_paper.pt");
}

TEST(SttRandom, LearnedMatchesReference) {
  check(build("stt_random", C, H, W, SttRandomOptions{}), "random.pt");
}
TEST(SttRandom, FixedMatchesReference) {
  SttRandomOptions o;
  o.learned = false;
  check(build("stt_random", C, H, W, o), "random_fixed.pt");
}
TEST(SttRandom, PaperMatchesReference) {
  check(build("stt_random", C, H, W, paper(SttRandomOptions{})), "random_paper.pt");
}

TEST(SttDenseFactorized, MatchesReference) {
  check(build("stt_dense_factorized", C, H, W, SttDenseFactorizedOptions{}), "dense_factorized.pt");
}
TEST(SttDenseFactorized, ThreeFactorsMatchReference) {
  SttDenseFactorizedOptions o;
  o.rows = {2, 3, 4};
  o.cols_h = {2, 3, 1};
  o.cols_w = {1, 2, 2};
  o.cols_c = {1, 2, 1};
  check(build("stt_dense_factorized", C, H, W, o), "dense_factorized_3.pt");
}
TEST(SttDenseFactorized, PaperMatchesReference) {
  check(build("stt_dense_factorized", C, H, W, paper(SttDenseFactorizedOptions{})),
        "dense_factorized_paper.pt");
}

TEST(SttRandomFactorized, MatchesReference) {
  check(build("stt_random_factorized", C, H, W, SttRandomFactorizedOptions{}),
        "random_factorized.pt");
}
TEST(SttRandomFactorized, ThreeFactorsMatchReference) {
  SttRandomFactorizedOptions o;
  o.rows = {2, 3, 4};
  o.cols = {4, 3, 2};
  check(build("stt_random_factorized", C, H, W, o), "random_factorized_3.pt");
}
TEST(SttRandomFactorized, FixedMatchesReference) {
  SttRandomFactorizedOptions o;
  o.learned = false;
  o.rows = {8, 3};
  o.cols = {2, 12};
  check(build("stt_random_factorized", C, H, W, o), "random_factorized_fixed.pt");
}

TEST(SttMixture, MatchesReference) {
  SttMixtureOptions o;
  o.theta_init = 0.3;
  check(build("stt_mixture", C, H, W, o), "mixture.pt");
}
TEST(SttMixture, FixedFactorsMatchReference) {
  SttMixtureOptions o;
  o.learned = false;
  o.rows = {4, 6};
  o.cols = {24, 1};
  check(build("stt_mixture", C, H, W, o), "mixture_fixed.pt");
}
TEST(SttMixture, PaperMatchesReference) {
  check(build("stt_mixture", C, H, W, paper(SttMixtureOptions{})), "mixture_paper.pt");
}

// --- gradchecks (H = 3, W = 2) ---

TEST(SttGradcheck, Dense) {
  torch::manual_seed(1);
  gradcheck_module(build("stt_dense", C, 3, 2, SttDenseOptions{}, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_dense", C, 3, 2, paper(SttDenseOptions{}), SNOptions{1e-12, 1}), 3, 2);
}
TEST(SttGradcheck, Random) {
  torch::manual_seed(2);
  SttRandomOptions fixed;
  fixed.learned = false;
  gradcheck_module(build("stt_random", C, 3, 2, SttRandomOptions{}, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_random", C, 3, 2, fixed, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_random", C, 3, 2, paper(SttRandomOptions{}), SNOptions{1e-12, 1}), 3, 2);
}
TEST(SttGradcheck, DenseFactorized) {
  torch::manual_seed(3);
  SttDenseFactorizedOptions three;
  three.rows = {3, 1, 2};
  three.cols_h = {3, 1, 1};
  three.cols_w = {1, 2, 1};
  three.cols_c = {2, 1, 1};
  gradcheck_module(build("stt_dense_factorized", C, 3, 2, SttDenseFactorizedOptions{}, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_dense_factorized", C, 3, 2, three, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_dense_factorized", C, 3, 2, paper(SttDenseFactorizedOptions{}), SNOptions{1e-12, 1}), 3, 2);
}
TEST(SttGradcheck, RandomFactorized) {
  torch::manual_seed(4);
  SttRandomFactorizedOptions o;
  o.rows = {2, 3};
  o.cols = {6, 1};
  SttRandomFactorizedOptions fixed;
  fixed.learned = false;
  gradcheck_module(build("stt_random_factorized", C, 3, 2, SttRandomFactorizedOptions{}, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_random_factorized", C, 3, 2, o, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_random_factorized", C, 3, 2, fixed, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_random_factorized", C, 3, 2, paper(SttRandomFactorizedOptions{}), SNOptions{1e-12, 1}), 3, 2);
}
TEST(SttGradcheck, Mixture) {
  torch::manual_seed(5);
  SttMixtureOptions fixed;
  fixed.learned = false;
  gradcheck_module(build("stt_mixture", C, 3, 2, SttMixtureOptions{}, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_mixture", C, 3, 2, fixed, SNOptions{1e-12, 1}), 3, 2);
  gradcheck_module(build("stt_mixture", C, 3, 2, paper(SttMixtureOptions{}), SNOptions{1e-12, 1}), 3, 2);
}

// --- behaviour ---

TEST(Stt, EveryModuleStartsAsIdentityAndKeepsShape) {
  const torch::Tensor x = torch::randn({2, C, H, W});
  for (const std::string type : {"stt_dense", "stt_random", "stt_dense_factorized",
                                 "stt_random_factorized", "stt_mixture"}) {
    auto opt = [&]() -> std::shared_ptr<const ContextOptions> {
      YAML::Node n(YAML::NodeType::Map);
      ConfigNode node(n, "context", std::make_shared<ConfigSource>());
      return context_entry(type).parse(node);
    }();
    auto m = context_entry(type).create(
        ContextSpec{C, H, W, CondSpec{}, 1e-5, kSN, opt});
    const torch::Tensor y = m->forward(x, {});
    EXPECT_TRUE(torch::equal(y, x)) << type;
  }
}

TEST(Stt, InputSizeMismatchNamesExpectedAndGot) {
  auto m = build("stt_dense", C, H, W, SttDenseOptions{});
  try {
    m->forward(torch::randn({2, C, W, H}), {});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("stt_dense: expected input B x 16 x 6 x 4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("got [2, 16, 4, 6]"), std::string::npos) << msg;
  }
}

TEST(Stt, FixedRandomIsABufferLearnedIsAParameter) {
  SttRandomOptions fixed;
  fixed.learned = false;
  auto f = build("stt_random", C, H, W, fixed), l = build("stt_random", C, H, W, SttRandomOptions{});
  EXPECT_TRUE(f->named_buffers().contains("r"));
  EXPECT_FALSE(f->named_parameters().contains("r"));
  EXPECT_TRUE(l->named_parameters().contains("r"));
  EXPECT_EQ(l->named_parameters()["r"].sizes(), torch::IntArrayRef({H * W, H * W}));
}

TEST(Stt, MixtureThetaStartsAtThetaInitAndSumsToOne) {
  SttMixtureOptions o;
  o.theta_init = 0.3;
  auto m = std::make_shared<SttMixtureImpl>(spec(C, H, W, o), o);
  const torch::Tensor t = m->theta();
  EXPECT_NEAR(t[0].item<double>(), 0.3, 1e-6);
  EXPECT_NEAR(t[1].item<double>(), 0.7, 1e-6);
}

TEST(Stt, KronChainMatchesBlockDefinition) {
  // Eq. 10 by hand for a 2x1 (x) 1x2.
  const torch::Tensor a = torch::tensor({{1.0}, {2.0}}), b = torch::tensor({{3.0, 4.0}});
  EXPECT_TRUE(torch::equal(kron_chain({a, b}), torch::tensor({{3.0, 4.0}, {6.0, 8.0}})));
}

// --- configs ---

namespace {
Config gan_config(const std::string& type, const std::string& g_extra = "",
                  const std::string& d_extra = "") {
  std::ostringstream y;
  y << "model: {resolution: 32, n_classes: 3, image_channels: 1}\n"
    << "generator: {ch: 8, z_dim: 16, context: {type: " << type << ", resolution: 32" << g_extra << "}}\n"
    << "discriminator: {ch: 8, context: {type: " << type << ", resolution: 16" << d_extra << "}}\n";
  return parse_config(y.str(), "test config");
}

}  // namespace

TEST(SttConfig, BadFactorProductNamesTheKey) {
  const Config cfg = gan_config("stt_random_factorized", ", rows: [32, 16], cols: [32, 32]");
  const std::string msg = error_of([&] { Generator g(cfg.model, cfg.generator); });
  EXPECT_NE(msg.find("key 'generator.context.rows'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("H*W = 1024"), std::string::npos) << msg;
  EXPECT_NE(msg.find("test config"), std::string::npos) << msg;
}

TEST(SttConfig, BadDenseFactorShapesNameTheKey) {
  // D attends at 16x16 with ch 8 * 4 = 32 channels, so c = 4.
  const Config cfg = gan_config("stt_dense_factorized", "", ", cols_c: [2, 3]");
  const std::string msg = error_of([&] { Discriminator d(cfg.model, cfg.discriminator); });
  EXPECT_NE(msg.find("key 'discriminator.context.cols_c'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("query channels c = 4"), std::string::npos) << msg;
  const Config cfg2 = gan_config("stt_mixture", "", ", rows: [16, 16], cols: [4, 4, 16]");
  const std::string msg2 = error_of([&] { Discriminator d(cfg2.model, cfg2.discriminator); });
  EXPECT_NE(msg2.find("key 'discriminator.context.cols'"), std::string::npos) << msg2;
  EXPECT_NE(msg2.find("expected 2 factors"), std::string::npos) << msg2;
}

TEST(SttConfig, KeysAreValidated) {
  // Random synthesizers have no query, so qk_divisor is an unknown key there.
  EXPECT_NE(error_of([] { gan_config("stt_random", ", qk_divisor: 4"); }).find("generator.context.qk_divisor"),
            std::string::npos);
  EXPECT_NE(error_of([] { gan_config("stt_mixture", ", theta_init: 1.0"); }).find("generator.context.theta_init"),
            std::string::npos);
  EXPECT_NE(error_of([] { gan_config("stt_dense_factorized", ", rows: [0, 4]"); }).find("generator.context.rows"),
            std::string::npos);
  const Config ok = gan_config("stt_mixture", ", learned: false, theta_init: 0.25, projections: paper");
  const auto& o = dynamic_cast<const SttMixtureOptions&>(*ok.generator.context.options);
  EXPECT_FALSE(o.learned);
  EXPECT_EQ(o.projections, Projections::paper);
  EXPECT_DOUBLE_EQ(o.theta_init, 0.25);
}

// Every module inside a full G (attending at 32x32) and D (at 16x16): forward, backward,
// and gradients reaching every context parameter once gamma is non-zero.
TEST(SttGan, EveryModuleTrainsInsideGAndDAt32) {
  for (const std::string type : {"stt_dense", "stt_random", "stt_dense_factorized",
                                 "stt_random_factorized", "stt_mixture"}) {
    torch::manual_seed(0);
    const Config cfg = gan_config(type);
    Generator g(cfg.model, cfg.generator);
    Discriminator d(cfg.model, cfg.discriminator);
    {
      torch::NoGradGuard ng;
      g->named_parameters()["context.gamma"].fill_(0.5);
      d->named_parameters()["context.gamma"].fill_(0.5);
    }
    const torch::Tensor z = torch::randn({2, 16}), y = torch::tensor({0, 2});
    const torch::Tensor x = g->forward(z, y);
    ASSERT_EQ(x.sizes(), torch::IntArrayRef({2, 1, 32, 32})) << type;
    const torch::Tensor out = d->forward(x, y);
    out.sum().backward();
    EXPECT_TRUE(torch::isfinite(out).all().item<bool>()) << type;
    for (auto* m : {static_cast<torch::nn::Module*>(g.get()), static_cast<torch::nn::Module*>(d.get())})
      for (const auto& kv : m->named_parameters()) {
        if (kv.key().rfind("context.", 0) != 0) continue;
        ASSERT_TRUE(kv.value().grad().defined()) << type << " " << kv.key();
        EXPECT_GT(kv.value().grad().abs().sum().item<double>(), 0.0) << type << " " << kv.key();
        EXPECT_TRUE(torch::isfinite(kv.value().grad()).all().item<bool>()) << type << " " << kv.key();
      }
  }
}

// Parameter counts at the GAN's shape (C = 256, 32 x 32): q 256*32, v 256*128, o 128*256,
// gamma; N = 1024, c = 32. Paper mode: v 256*256, no q/o, c = 256.
TEST(SttParams, CountsAtC256And32x32) {
  const int64_t convs_q = 8192 + 32768 + 32768 + 1, convs = 32768 + 32768 + 1;
  const int64_t dense = 3 * (32 + 1024 * 32 + 1024 * 32);  // Eq. 14-16 matrices
  const int64_t factored = 3 * 32 + 6 * (1024 + 32);        // default [H,W] x [.,1]/[1,.]
  struct Row { std::string type; std::shared_ptr<const ContextOptions> opt; int64_t expected; };
  SttRandomOptions rfixed;
  rfixed.learned = false;
  const std::vector<Row> rows = {
      {"stt_dense", std::make_shared<SttDenseOptions>(), convs_q + dense},
      {"stt_random", std::make_shared<SttRandomOptions>(), convs + 1024 * 1024},
      {"stt_random (fixed R)", std::make_shared<SttRandomOptions>(rfixed), convs},
      {"stt_dense_factorized", std::make_shared<SttDenseFactorizedOptions>(), convs_q + factored},
      {"stt_random_factorized", std::make_shared<SttRandomFactorizedOptions>(), convs + 2 * 1024},
      {"stt_mixture", std::make_shared<SttMixtureOptions>(), convs_q + dense + 2 * 1024 + 2},
      {"stt_dense (paper)", std::make_shared<SttDenseOptions>(paper(SttDenseOptions{})),
       65536 + 1 + 2 * (32 + 32768 + 262144) + 32768 * 2 + 256},
  };
  for (const auto& r : rows) {
    const std::string type = r.type.substr(0, r.type.find(' '));
    auto m = context_entry(type).create(ContextSpec{256, 32, 32, CondSpec{}, 1e-5, kSN, r.opt});
    const int64_t n = count(*m);
    std::cout << "params " << r.type << " at C=256, 32x32: " << n << "\n";
    EXPECT_EQ(n, r.expected) << r.type;
  }
}

}  // namespace test_stt
