// KAO_KV, KAO_QKV and SAO (layers/context/{kronecker,siamese}_attention.*) against the
// Python reference written from the papers' equations (oracle/kao_sao.py), with SAGAN's and
// the papers' projections, H != W; double-precision gradchecks; inside full G and D at 32;
// and the MAC counter the `bench context` profiler uses against hand-computed counts.
#include <gtest/gtest.h>

#include "core/mac_counter.h"
#include "gan/config/config.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "layers/context/bare_operator.h"
#include "layers/context/kronecker_attention.h"
#include "layers/context/siamese_attention.h"
#include "support/gradcheck.h"
#include "support/module_check.h"
#include "support/oracle.h"

namespace test_kao_sao {

using namespace hamgan;
using namespace hamgan::test;

namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;  // fp32; softmax and means reduce in other orders
const SNOptions kSN{1e-6, 1};

ContextModule make(const std::string& type, const std::string& projections, int64_t c,
                   SNOptions sn = kSN) {
  YAML::Node n = YAML::Load("{type: " + type + ", projections: " + projections + "}");
  const ContextConfig cc =
      parse_context_config(ConfigNode(n, "context", std::make_shared<ConfigSource>()));
  ContextSpec spec;
  spec.channels = c;
  spec.sn = sn;
  spec.options = cc.options;
  return context_entry(type).create(spec);
}

// The shared oracle check (support/module_check.h) on input `in`.
void check(const std::string& type, const std::string& projections) {
  ContextModule m = make(type, projections, 16);
  expect_matches_oracle(*m, type + "_" + projections + ".pt",
                        [&](const std::vector<torch::Tensor>& in) { return m->forward(in[0], {}); },
                        {"in"}, kRtol, kAtol);
}

void gradcheck_module(const std::string& type, const std::string& projections) {
  torch::manual_seed(9);
  ContextModule m = make(type, projections, 16, SNOptions{1e-12, 1});
  m->to(torch::kDouble);
  m->eval();
  std::vector<torch::Tensor> leaves;
  for (auto& kv : m->named_parameters()) {
    if (kv.key() == "gamma") {
      torch::NoGradGuard ng;
      kv.value().fill_(0.7);
    }
    leaves.push_back(kv.value());
  }
  torch::Tensor x = torch::randn({2, 16, 3, 5}, torch::kDouble).requires_grad_(true);
  leaves.push_back(x);
  EXPECT_TRUE(gradcheck([&] { return m->forward(x, {}); }, leaves)) << type << " " << projections;
}

Config config32(const std::string& type) {
  return parse_config("model: {resolution: 32, n_classes: 5, image_channels: 1}\n"
                      "generator: {ch: 4, z_dim: 16, context: {type: " + type + ", resolution: 32}}\n"
                      "discriminator: {ch: 4, context: {type: " + type + ", resolution: 16}}\n",
                      "test config");
}

void check_g_d(const std::string& type) {
  const Config cfg = config32(type);
  {
    const std::string file = "g32_" + type + ".pt";
    const TensorMap d = load_tensors(oracle_path(file));
    Generator g(cfg.model, cfg.generator);
    load_state_dict(*g, with_prefix(d, "init"), file);
    g->train();
    const torch::Tensor x = g->forward(get(d, "z"), get(d, "y"));
    (x * get(d, "r")).sum().backward();
    EXPECT_TRUE(close(x, get(d, "train.x"), kRtol, 2e-5)) << file;
    for (const auto& kv : g->named_parameters()) {
      const torch::Tensor gr = kv.value().grad();
      EXPECT_TRUE(close(gr.defined() ? gr : torch::zeros_like(kv.value()),
                        get(d, "train.grad." + kv.key()), kRtol, 1e-4))
          << file << " grad " << kv.key();
    }
  }
  {
    const std::string file = "d32_" + type + ".pt";
    const TensorMap d = load_tensors(oracle_path(file));
    Discriminator dis(cfg.model, cfg.discriminator);
    load_state_dict(*dis, with_prefix(d, "init"), file);
    dis->train();
    torch::Tensor x = get(d, "x").clone().requires_grad_(true);
    const torch::Tensor out = dis->forward(x, get(d, "y"));
    out.sum().backward();
    EXPECT_TRUE(close(out, get(d, "train.out"), kRtol, 1e-3)) << file;
    EXPECT_TRUE(close(x.grad(), get(d, "train.grad_x"), kRtol, 2e-5)) << file << " grad x";
    for (const auto& kv : dis->named_parameters())
      EXPECT_TRUE(close(kv.value().grad(), get(d, "train.grad." + kv.key()), kRtol, 1e-4))
          << file << " grad " << kv.key();
  }
}

}  // namespace

TEST(KaoKv, SaganProjectionsMatchReference) { check("kao_kv", "sagan"); }
TEST(KaoKv, PaperProjectionsMatchReference) { check("kao_kv", "paper"); }
TEST(KaoQkv, SaganProjectionsMatchReference) { check("kao_qkv", "sagan"); }
TEST(KaoQkv, PaperProjectionsMatchReference) { check("kao_qkv", "paper"); }
TEST(Sao, SaganProjectionsMatchReference) { check("sao", "sagan"); }
TEST(Sao, PaperProjectionsMatchReference) { check("sao", "paper"); }

TEST(KaoKv, GradcheckDouble) {
  gradcheck_module("kao_kv", "sagan");
  gradcheck_module("kao_kv", "paper");
}
TEST(KaoQkv, GradcheckDouble) {
  gradcheck_module("kao_qkv", "sagan");
  gradcheck_module("kao_qkv", "paper");
}
TEST(Sao, GradcheckDouble) {
  gradcheck_module("sao", "sagan");
  gradcheck_module("sao", "paper");
}

TEST(KaoKv, InFullGAndDMatchesReference) { check_g_d("kao_kv"); }
TEST(KaoQkv, InFullGAndDMatchesReference) { check_g_d("kao_qkv"); }
TEST(Sao, InFullGAndDMatchesReference) { check_g_d("sao"); }

TEST(Context, StartAsIdentityAndKeepShape) {
  for (const char* t : {"kao_kv", "kao_qkv", "sao"})
    for (const char* p : {"sagan", "paper"}) {
      ContextModule m = make(t, p, 16);
      const torch::Tensor x = torch::randn({2, 16, 5, 3});
      EXPECT_TRUE(torch::equal(m->forward(x, {}), x)) << t << " " << p;
    }
}

TEST(Context, WrongChannelsNamedInError) {
  ContextModule m = make("sao", "sagan", 16);
  try {
    m->forward(torch::randn({2, 8, 4, 4}), {});
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("sao: expected input B x 16 x H x W"), std::string::npos)
        << e.what();
  }
}

// Hand counts for B=2, C=16 (q, k: 2 channels, v: 8), 6x4 (N=24, h+w=10), eval mode:
// 1x1 convs theta, phi, g, o: B*N*(16*2 + 16*2 + 16*8 + 8*16) = 2*24*320 = 15360;
// KAO_KV: E = K^T Q: B*10*2*24 = 960; V softmax(E): B*8*10*24 = 3840  -> 20160.
TEST(MacCounter, KaoKvModuleMatchesHandCount) {
  ContextModule m = make("kao_kv", "sagan", 16);
  m->eval();
  torch::NoGradGuard ng;
  const torch::Tensor x = torch::randn({2, 16, 6, 4});
  MacCounter mc;
  m->forward(x, {});
  EXPECT_EQ(mc.macs(), 15360 + 960 + 3840);
}

// Bare SAO on Q = K = V = X, B=1, C=64, 14x14 (SAO paper Table 2 row 1, N=196):
// w^T Q once (Q = K): N*C; V (K^T w): C*N; v_bar (w^T Q): C*N  -> 3 * 12544 = 37632.
TEST(MacCounter, BareSaoMatchesHandCount) {
  const BareOperator op = bare_operator("sao")(64);
  torch::NoGradGuard ng;
  const torch::Tensor x = torch::randn({1, 64, 196});
  MacCounter mc;
  op.op(x, x, x, 14, 14);
  EXPECT_EQ(mc.macs(), 3 * 64 * 196);
}

}  // namespace test_kao_sao
