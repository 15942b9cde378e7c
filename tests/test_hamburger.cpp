// Hamburger context modules (ham_nmf, ham_vq, ham_cd) against the Python reference
// (oracle/hamburger.py, written from Alg. 1-3 of Geng et al. 2021): outputs, input and weight
// gradients, online-updated bases, eval mode; the bare decompositions' one-step and BPTT
// gradients; double-precision gradient checks; NMF invariants; Hamburger inside full G and D.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "gan/config/config.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "layers/context/cd.h"
#include "layers/context/hamburger.h"
#include "layers/context/nmf.h"
#include "layers/context/vq.h"
#include "support/gradcheck.h"
#include "support/oracle.h"

namespace test_hamburger {

using namespace hamgan;
using namespace hamgan::test;

namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;  // fp32; K iterations of bmm in other orders
const SNOptions kSN{1e-6, 1};

ContextSpec make_spec(const std::string& yaml, int64_t channels, int64_t classes, int64_t h,
                      int64_t w) {
  ConfigNode node(YAML::Load(yaml), "context", std::make_shared<ConfigSource>());
  ContextSpec s;
  s.channels = channels;
  s.height = h;
  s.width = w;
  s.cond = classes > 0 ? CondSpec{CondKind::labels, classes} : CondSpec{};
  s.sn = kSN;
  s.options = parse_context_config(node).options;
  return s;
}

std::shared_ptr<HamburgerImpl> make_ham(const ContextSpec& spec) {
  return std::dynamic_pointer_cast<HamburgerImpl>(make_hamburger(spec));
}

struct Case {
  std::string name, yaml;
  int64_t channels, classes, b, h, w;
};

std::vector<Case> read_cases() {
  std::ifstream in(oracle_path("cases.txt"));
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string p; std::getline(ss, p, '|');) f.push_back(p);
    cases.push_back({f.at(0), f.at(6), std::stoll(f.at(1)), std::stoll(f.at(2)), std::stoll(f.at(3)),
                     std::stoll(f.at(4)), std::stoll(f.at(5))});
  }
  return cases;
}

}  // namespace

// Each case runs twice here, in fp32 (as the oracle) and in double from the same state (the
// double result stands in for the exact one). Two fp32 implementations summing in other orders
// differ by about their distances from the exact result: kRtol / kAtol where those are small, but
// more for ill-conditioned cases (ham_cd's Cholesky solve with BPTT: 1.7e-4 relative on the AMD
// EPYC's MKL). So (a) fp32 against the oracle within kRtol / kAtol plus twice this side's
// measured fp32 error |fp32 - double|, and (b) that error at most 4x the oracle's own
// |oracle - double| (plus kRtol / kAtol): a fault in an fp32-only kernel fails (b), a fault in
// the shared math fails (a).
TEST(Hamburger, ModulesMatchReference) {
  const std::vector<Case> cases = read_cases();
  ASSERT_EQ(cases.size(), 11u);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name + " " + c.yaml);
    const TensorMap d = load_tensors(oracle_path(c.name + ".pt"));
    const bool given = d.count("bases0.train") > 0;  // random init; else the `bases` buffer
    const torch::Tensor cond = c.classes > 0 ? get(d, "c") : torch::Tensor();
    // Every compared tensor by its oracle key.
    const auto run = [&](torch::ScalarType dtype) {
      auto m = make_ham(make_spec(c.yaml, c.channels, c.classes, c.h, c.w));
      load_state_dict(*m, with_prefix(d, "init"), c.name);
      m->to(dtype);
      torch::Tensor x = get(d, "x").to(dtype).clone().requires_grad_(true);
      std::map<std::string, torch::Tensor> r;
      m->train();
      if (given) m->set_next_bases(get(d, "bases0.train").to(dtype));
      const torch::Tensor y = m->forward(x, cond);
      (y * get(d, "r").to(dtype)).sum().backward();
      r["train.y"] = y.detach();
      r["train.grad_x"] = x.grad();
      for (const auto& kv : m->named_parameters()) {
        const torch::Tensor g = kv.value().grad();
        r["train.grad." + kv.key()] = g.defined() ? g : torch::zeros_like(kv.value());
      }
      for (const auto& kv : m->named_buffers()) r["after." + kv.key()] = kv.value().detach().clone();
      m->eval();
      torch::NoGradGuard ng;
      if (given) m->set_next_bases(get(d, "bases0.eval").to(dtype));
      r["eval.y"] = m->forward(x.detach(), cond);
      return r;
    };
    const auto f32 = run(torch::kFloat), f64 = run(torch::kDouble);
    for (const auto& [key, got] : f32) {
      const torch::Tensor want = get(d, key), exact = f64.at(key);
      const double own_error = (got.to(torch::kDouble) - exact).abs().max().item<double>();
      const double oracle_error = (want.to(torch::kDouble) - exact).abs().max().item<double>();
      EXPECT_TRUE(close(got, want, kRtol, kAtol + 2 * own_error)) << key << " (a)";
      EXPECT_TRUE(close(got.to(torch::kDouble), exact, kRtol, kAtol + 4 * oracle_error)) << key << " (b)";
    }
  }
}

// One-step gradient = autograd through the final C update alone (Eq. 13); BPTT = through all
// K steps; the oracle computes both by their definitions, and they differ.
TEST(Hamburger, BareDecompositionGradientsMatchReference) {
  const std::vector<std::pair<std::string, std::shared_ptr<Decomposition>>> hams = {
      {"nmf", std::make_shared<NMF>(NMFOptions{1.0, false})},
      {"vq", std::make_shared<VQ>(VQOptions{0.5})},
      {"cd", std::make_shared<CD>(CDOptions{0.5, 0.1})}};
  for (const auto& [name, ham] : hams) {
    SCOPED_TRACE(name);
    const TensorMap d = load_tensors(oracle_path("m_" + name + ".pt"));
    torch::Tensor grads[2];
    for (HamGrad mode : {HamGrad::one_step, HamGrad::bptt}) {
      torch::Tensor x = get(d, "X").clone().requires_grad_(true);
      const Decomposed out = decompose(*ham, x, get(d, "D0"), 4, mode);
      (out.output * get(d, "r")).sum().backward();
      EXPECT_TRUE(close(out.output, get(d, "y"), 1e-9, 1e-11));
      const char* key = mode == HamGrad::one_step ? "grad.one_step" : "grad.bptt";
      EXPECT_TRUE(close(x.grad(), get(d, key), 1e-8, 1e-10)) << key;
      grads[mode == HamGrad::bptt] = x.grad();
    }
    EXPECT_FALSE(torch::allclose(grads[0], grads[1], 1e-3, 1e-6)) << "one_step equals bptt";
  }
}

// The one_step differentiable path: D_K C with C the final update of C_K, D_K and C_K constants.
TEST(Hamburger, GradcheckOneStepFinalUpdateDouble) {
  torch::manual_seed(3);
  const std::vector<std::shared_ptr<Decomposition>> hams = {
      std::make_shared<NMF>(NMFOptions{}), std::make_shared<VQ>(VQOptions{0.3}),
      std::make_shared<CD>(CDOptions{0.2, 0.1})};
  for (const auto& ham : hams) {
    SCOPED_TRACE(ham->name());
    torch::Tensor x = ham->prepare(torch::randn({2, 5, 7}, torch::kDouble)).detach();
    torch::Tensor bases = ham->random_bases(2, 5, 3, c10::nullopt, torch::kDouble), coef;
    coef = ham->init_coef(x, bases);
    for (int k = 0; k < 3; ++k) ham->step(x, bases, coef);
    x.requires_grad_(true);
    EXPECT_TRUE(gradcheck([&] { return torch::bmm(bases, ham->final_coef(x, bases, coef)); }, {x}));
  }
}

namespace {

std::string small_yaml(const std::string& type, const std::string& extra) {
  return "{type: " + type + ", d: 4, r: 2, groups: 2, steps: 3" +
         (type == "ham_nmf" ? "" : ", temperature: 0.5") + extra + "}";
}

// Gradient checks in eval mode (deterministic BN) with given bases, sigma and CBN non-zero.
void gradcheck_module(const std::string& type, int64_t classes, const std::string& grad) {
  SCOPED_TRACE(type + " classes " + std::to_string(classes) + " grad " + grad);
  auto m = make_ham(make_spec(small_yaml(type, ", grad: " + grad), 6, classes, 3, 4));
  m->to(torch::kDouble);
  m->eval();
  {
    torch::NoGradGuard ng;
    m->sigma.fill_(0.7);
    for (auto& p : m->parameters())
      if (p.dim() == 2) p.normal_(0, 0.3);  // CBN gain/bias embeddings (zero at init)
  }
  const torch::Tensor bases = m->ham().random_bases(2 * 2, 4, 2, c10::nullopt, torch::kDouble);
  torch::Tensor x = torch::randn({2, 6, 3, 4}, torch::kDouble).requires_grad_(true);
  const torch::Tensor labels = torch::tensor({2, 0});
  auto f = [&] {
    m->set_next_bases(bases);
    return m->forward(x, classes > 0 ? labels : torch::Tensor());
  };
  std::vector<torch::Tensor> leaves = {m->sigma, m->upper->weight_orig};
  if (grad == "bptt") {  // one_step's paths through M are not the derivative of the forward
    leaves.push_back(x);
    leaves.push_back(m->lower->weight_orig);
  }
  for (const auto& kv : m->named_parameters())
    if (kv.key().rfind("norm.", 0) == 0) leaves.push_back(kv.value());
  EXPECT_TRUE(gradcheck(f, leaves));
}

}  // namespace

TEST(Hamburger, GradcheckBpttModulesDouble) {
  torch::manual_seed(4);
  for (const char* type : {"ham_nmf", "ham_vq", "ham_cd"})
    for (int64_t classes : {0, 3}) gradcheck_module(type, classes, "bptt");
}

TEST(Hamburger, GradcheckOneStepBreadAndNormDouble) {
  torch::manual_seed(5);
  for (const char* type : {"ham_nmf", "ham_vq", "ham_cd"}) gradcheck_module(type, 3, "one_step");
}

// Lee & Seung (2001): MU keeps the factors non-negative and ||X - DC|| non-increasing.
TEST(Hamburger, NmfFactorsStayNonNegativeAndErrorDoesNotIncrease) {
  torch::manual_seed(6);
  const NMF nmf(NMFOptions{});
  const torch::Tensor x = torch::rand({3, 16, 40}, torch::kDouble);
  torch::Tensor bases = nmf.random_bases(3, 16, 4, c10::nullopt, torch::kDouble);
  torch::Tensor coef = nmf.init_coef(x, bases);
  auto err = [&] { return (x - torch::bmm(bases, coef)).norm().item<double>(); };
  double prev = err();
  const double first = prev;
  for (int k = 0; k < 12; ++k) {
    nmf.step(x, bases, coef);
    const double e = err();
    EXPECT_LE(e, prev * (1 + 1e-9)) << "step " << k;
    EXPECT_GE(bases.min().item<double>(), 0.0);
    EXPECT_GE(coef.min().item<double>(), 0.0);
    prev = e;
  }
  EXPECT_LT(prev, 0.9 * first);  // and it actually decreases
}

// NMF::iterate's fused CPU loop (autograd off: one_step's K steps) against the plain loop of
// step(): the same updates in the same order, only matmul blocking differs (double: 1e-12).
// With autograd on (bptt) it is the plain loop, differentiable.
TEST(Hamburger, NmfFusedIterationsEqualTheStepLoop) {
  torch::manual_seed(9);
  const NMF nmf(NMFOptions{});
  struct Shape { int64_t batch, d, n, r; };
  for (const Shape s : {Shape{5, 16, 40, 4}, Shape{1, 8, 12, 2}, Shape{3, 32, 64, 4}}) {
    for (const auto dtype : {torch::kDouble, torch::kFloat}) {
      SCOPED_TRACE(std::to_string(s.batch) + "x" + std::to_string(s.d) + "x" + std::to_string(s.n) +
                   (dtype == torch::kDouble ? " double" : " float"));
      const torch::Tensor x = torch::rand({s.batch, s.d, s.n}, dtype);
      const torch::Tensor b0 = nmf.random_bases(s.batch, s.d, s.r, c10::nullopt, dtype);
      const torch::Tensor c0 = nmf.init_coef(x, b0);
      const torch::Tensor b0_copy = b0.clone(), c0_copy = c0.clone();
      torch::Tensor b_ref = b0, c_ref = c0, b = b0, c = c0;
      nmf.Decomposition::iterate(x, b_ref, c_ref, 6);
      {
        torch::NoGradGuard ng;
        nmf.iterate(x, b, c, 6);
      }
      const double rtol = dtype == torch::kDouble ? 1e-12 : 1e-4, atol = dtype == torch::kDouble ? 1e-14 : 1e-6;
      EXPECT_TRUE(close(b, b_ref, rtol, atol));
      EXPECT_TRUE(close(c, c_ref, rtol, atol));
      EXPECT_TRUE(torch::equal(b0, b0_copy) && torch::equal(c0, c0_copy));  // inputs untouched
    }
  }
  const torch::Tensor x = torch::rand({2, 6, 10}, torch::kDouble).requires_grad_(true);
  torch::Tensor b = nmf.random_bases(2, 6, 2, c10::nullopt, torch::kDouble), c = nmf.init_coef(x, b);
  nmf.iterate(x, b, c, 2);
  EXPECT_TRUE(b.requires_grad() && c.requires_grad());
}

TEST(Hamburger, StartsAsIdentityAndKeepsShape) {
  for (const char* type : {"ham_nmf", "ham_vq", "ham_cd"}) {
    auto m = make_ham(make_spec(std::string("{type: ") + type + "}", 16, 4, 5, 7));
    EXPECT_EQ(m->d(), 16);
    EXPECT_EQ(m->r(), 2);
    const torch::Tensor x = torch::randn({2, 16, 5, 7});
    const torch::Tensor y = m->forward(x, torch::tensor({1, 3}));
    EXPECT_TRUE(torch::equal(y, x)) << type;
  }
}

// The Hamburger treats positions alike (the bread is 1x1 convolutions, the decomposition sees
// positions as the columns of X, Eqs. 1-2): permuting the H*W positions of the input permutes
// the output and the input gradient the same way, for every ham, in train and eval mode, in
// both memory formats. A fault that treated some positions differently (a reshape that mixes
// H and W, a layout path that reads the wrong stride) would break this.
TEST(Hamburger, PermutingPositionsPermutesOutputAndGradient) {
  const int64_t b = 2, c = 16, h = 6, w = 8, n = h * w;
  for (const char* type : {"ham_nmf", "ham_vq", "ham_cd"}) {
    for (const bool train : {true, false}) {
      for (const bool channels_last : {false, true}) {
        const std::string name = std::string(type) + (train ? " train" : " eval") + (channels_last ? " NHWC" : " NCHW");
        // Two modules from one seed: in train mode each sees its first forward (SN's power
        // iteration and BN's running statistics move with every forward).
        std::shared_ptr<HamburgerImpl> m[2];
        for (auto& mi : m) {
          torch::manual_seed(5);
          mi = make_ham(make_spec(std::string("{type: ") + type + ", r: 3}", c, 4, h, w));
          mi->to(torch::kDouble);
          torch::NoGradGuard ng;
          mi->sigma.fill_(0.7);  // away from the identity it starts as
          mi->train(train);
        }
        torch::manual_seed(6);
        const auto perm = torch::randperm(n);
        const auto permute = [&](const torch::Tensor& t) {
          return t.flatten(2).index_select(2, perm).view({t.size(0), t.size(1), h, w});
        };
        auto x = torch::rand({b, c, h, w}, torch::kDouble);
        if (channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
        auto xp = permute(x);
        if (channels_last) xp = xp.contiguous(at::MemoryFormat::ChannelsLast);
        x.requires_grad_(true), xp.requires_grad_(true);
        const auto bases = torch::rand({b, m[0]->d(), m[0]->r()}, torch::kDouble);
        const auto y = torch::tensor({1, 3});
        const auto probe = torch::randn({b, c, h, w}, torch::kDouble);
        m[0]->set_next_bases(bases), m[1]->set_next_bases(bases);
        const auto out = m[0]->forward(x, y), outp = m[1]->forward(xp, y);
        (out * probe).sum().backward();
        (outp * permute(probe)).sum().backward();
        EXPECT_TRUE(torch::allclose(outp, permute(out), 1e-9, 1e-11)) << name;
        EXPECT_TRUE(torch::allclose(xp.grad(), permute(x.grad()), 1e-9, 1e-11)) << name;
        EXPECT_FALSE(torch::allclose(out, x, 1e-3, 1e-3)) << name << ": the module did nothing";
      }
    }
  }
}

TEST(Hamburger, RandomBasesDistributionsAndSeed) {
  const torch::Tensor u = NMF(NMFOptions{}).random_bases(4, 8, 3, c10::nullopt, {});
  EXPECT_GE(u.min().item<float>(), 0.f);
  EXPECT_LT(u.max().item<float>(), 1.f);
  const torch::Tensor un = NMF(NMFOptions{1.0, true}).random_bases(4, 8, 3, c10::nullopt, {});
  EXPECT_TRUE(close(un.norm(2, 1), torch::ones({4, 3}), 1e-5, 1e-6));
  EXPECT_GE(un.min().item<float>(), 0.f);
  const torch::Tensor v = VQ(VQOptions{}).random_bases(4, 8, 3, c10::nullopt, {});
  EXPECT_TRUE(close(v.norm(2, 1), torch::ones({4, 3}), 1e-5, 1e-6));
  EXPECT_LT(v.min().item<float>(), 0.f);
  // seed: the module's own generator makes random-init forwards reproducible.
  for (const char* type : {"ham_nmf", "ham_vq", "ham_cd"}) {
    auto spec = make_spec(std::string("{type: ") + type + ", seed: 3, r: 2}", 8, 0, 4, 5);
    auto a = make_ham(spec), b = make_ham(spec);
    load_state_dict(*b, state_dict(*a), "a");
    a->eval();  // no power iteration: only D may change between forwards
    b->eval();
    torch::NoGradGuard ng;
    a->sigma.fill_(1.0);
    b->sigma.fill_(1.0);
    const torch::Tensor x = torch::randn({2, 8, 4, 5});
    const torch::Tensor ya = a->forward(x, {});
    EXPECT_TRUE(torch::equal(ya, b->forward(x, {}))) << type;
    EXPECT_FALSE(torch::equal(ya, a->forward(x, {}))) << type << ": D must be redrawn";
    a->reseed(3);
    EXPECT_TRUE(torch::equal(ya, a->forward(x, {}))) << type;
  }
}

TEST(Hamburger, BadInputIsNamed) {
  auto expect_error = [](const std::function<void()>& f, const std::vector<std::string>& parts) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      for (const auto& p : parts)
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
    }
  };
  expect_error([] { make_spec("{type: ham_nmf, beta: 0.1}", 8, 0, 4, 4); }, {"'context.beta'", "unknown key"});
  expect_error([] { make_spec("{type: ham_vq, grad: implicit}", 8, 0, 4, 4); }, {"'context.grad'", "one_step, bptt"});
  expect_error([] { make_spec("{type: ham_cd, init: learned}", 8, 0, 4, 4); }, {"'context.init'", "random, fixed, online"});
  expect_error([] { make_ham(make_spec("{type: ham_nmf}", 4, 0, 4, 4)); }, {"ham_nmf", "r = d/8 is 0", "d = 4"});
  expect_error([] {
    auto m = make_ham(make_spec("{type: ham_cd, r: 2}", 8, 0, 4, 4));
    m->set_next_bases(torch::rand({2, 8, 3}));
    m->forward(torch::randn({2, 8, 4, 4}), {});
  }, {"ham_cd", "[2, 8, 3]", "expected [2, 8, 2]"});
}

// Every ham inside a full G and D at 32x32 (D's context at 16x16), forward and backward.
TEST(Hamburger, InsideGeneratorAndDiscriminator) {
  torch::manual_seed(9);
  for (const char* type : {"ham_nmf", "ham_vq", "ham_cd"}) {
    SCOPED_TRACE(type);
    std::ostringstream y;
    y << "model: {resolution: 32, n_classes: 5, image_channels: 1}\n"
      << "generator: {ch: 8, z_dim: 16, context: {type: " << type << ", resolution: 32}}\n"
      << "discriminator: {ch: 8, context: {type: " << type << ", resolution: 16, grad: bptt}}\n";
    const Config cfg = parse_config(y.str(), "test config");
    Generator g(cfg.model, cfg.generator);
    Discriminator dis(cfg.model, cfg.discriminator);
    for (auto* mod : {static_cast<torch::nn::Module*>(g.get()), static_cast<torch::nn::Module*>(dis.get())}) {
      torch::NoGradGuard ng;
      for (auto& kv : mod->named_parameters())
        if (kv.key() == "context.sigma") kv.value().fill_(0.5);
    }
    const torch::Tensor labels = torch::tensor({0, 4, 2});
    const torch::Tensor img = g->forward(torch::randn({3, 16}), labels);
    ASSERT_EQ(img.sizes(), torch::IntArrayRef({3, 1, 32, 32}));
    const torch::Tensor out = dis->forward(img, labels);
    out.sum().backward();
    EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
    for (auto* mod : {static_cast<torch::nn::Module*>(g.get()), static_cast<torch::nn::Module*>(dis.get())})
      for (auto& kv : mod->named_parameters())
        if (kv.key().rfind("context.", 0) == 0 && kv.key().find("weight_orig") != std::string::npos) {
          ASSERT_TRUE(kv.value().grad().defined()) << kv.key();
          EXPECT_TRUE(torch::isfinite(kv.value().grad()).all().item<bool>()) << kv.key();
          EXPECT_GT(kv.value().grad().abs().sum().item<double>(), 0.0) << kv.key();
        }
  }
}

}  // namespace test_hamburger
