// The registry sweep: every context module in context_registry(), created by name with its
// default keys (and, where the module takes it, projections: paper), on a tiny H != W input:
// identity at init (its scalar gate gamma / sigma is 0), a state-dict round trip into a fresh
// instance, a double-precision gradient check with the gate open, and channels-last equal to
// NCHW. The cases come from the registry itself, so a newly registered module is swept.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "gan/models/memory_format.h"
#include "layers/context/context.h"
#include "support/gradcheck.h"
#include "support/module_check.h"
#include "support/oracle.h"

namespace test_context_registry {

using namespace hamgan;
using hamgan::test::close;

constexpr int64_t B = 2, C = 16, H = 4, W = 6;  // H, W even: self_attention pools 2x2
const SNOptions kSN{1e-12, 1};

struct Case {
  std::string type;
  std::string keys;  // YAML flow map of the module's keys
  std::string label;
};

std::shared_ptr<const ContextOptions> parse_keys(const std::string& type, const std::string& keys) {
  YAML::Node n = YAML::Load(keys);
  ConfigNode node(n, "context", std::make_shared<ConfigSource>());
  auto opt = context_entry(type).parse(node);
  node.finish();
  return opt;
}

// Default keys for every registered module, plus projections: paper where it parses.
std::vector<Case> registry_cases() {
  std::vector<Case> cases;
  for (const auto& e : context_registry()) {
    if (e.name == "none") continue;  // no module (checked by NamesAreUniqueAndOnlyNoneHasNoModule)
    cases.push_back({e.name, "{}", e.name});
    try {
      parse_keys(e.name, "{projections: paper}");
      cases.push_back({e.name, "{projections: paper}", e.name + "_paper"});
    } catch (const Error&) {  // the module has no paper form
    }
  }
  return cases;
}

// Keys under which a module's backward is the exact derivative of its forward, where its
// defaults deliberately are not: Hamburger's one-step gradient (Eq. 13) skips the paths
// through the K iterations. A new module with such a gradient adds its line here.
std::string exact_gradient_keys(const std::string& type) {
  static const std::map<std::string, std::string> keys = {
      {"ham_nmf", "{grad: bptt}"}, {"ham_vq", "{grad: bptt}"}, {"ham_cd", "{grad: bptt}"}};
  const auto it = keys.find(type);
  return it == keys.end() ? "" : it->second;
}

// `a` with the keys of `b` set over it (both flow maps).
std::string merge_keys(const std::string& a, const std::string& b) {
  YAML::Node m = YAML::Load(a);
  if (!b.empty())
    for (const auto& kv : YAML::Load(b)) m[kv.first.as<std::string>()] = kv.second;
  YAML::Emitter out;
  out << YAML::Flow << m;
  return out.c_str();
}

ContextModule create(const std::string& type, const std::string& keys) {
  ContextSpec spec;
  spec.channels = C;
  spec.height = H;
  spec.width = W;
  spec.sn = kSN;
  spec.options = parse_keys(type, keys);
  return context_entry(type).create(spec);
}

// The residual gate: the one scalar parameter named gamma or sigma.
torch::Tensor gate(torch::nn::Module& m) {
  torch::Tensor g;
  int found = 0;
  for (const auto& kv : m.named_parameters(false))
    if ((kv.key() == "gamma" || kv.key() == "sigma") && kv.value().numel() == 1) g = kv.value(), ++found;
  EXPECT_EQ(found, 1) << "expected one scalar gate parameter named gamma or sigma";
  return g;
}

void set_gate(torch::nn::Module& m, double v) {
  torch::NoGradGuard ng;
  gate(m).fill_(v);
}

std::string save_state(torch::nn::Module& m) {
  torch::serialize::OutputArchive ar;
  m.save(ar);
  std::ostringstream os;
  ar.save_to(os);
  return os.str();
}

void load_state(torch::nn::Module& m, const std::string& bytes) {
  std::istringstream is(bytes);
  torch::serialize::InputArchive ar;
  ar.load_from(is);
  m.load(ar);
}

// Modules that draw random values per forward (Hamburger's bases) draw the same ones.
torch::Tensor run(const ContextModule& m, const torch::Tensor& x) {
  torch::manual_seed(123);
  return m->forward(x, {});
}

class ContextSweep : public ::testing::TestWithParam<Case> {};

TEST(ContextRegistry, NamesAreUniqueAndOnlyNoneHasNoModule) {
  std::set<std::string> seen;
  for (const auto& e : context_registry()) {
    EXPECT_TRUE(seen.insert(e.name).second) << e.name << " registered twice";
    EXPECT_EQ(create(e.name, "{}") == nullptr, e.name == "none") << e.name;
  }
}

TEST_P(ContextSweep, StartsAsIdentity) {
  const Case& c = GetParam();
  torch::manual_seed(1);
  ContextModule m = create(c.type, c.keys);
  EXPECT_EQ(gate(*m).item<double>(), 0.0);
  const torch::Tensor x = torch::randn({B, C, H, W});
  for (bool train : {true, false}) {
    m->train(train);
    const torch::Tensor y = run(m, x);
    EXPECT_TRUE(torch::equal(y, x)) << (train ? "train" : "eval");
  }
}

TEST_P(ContextSweep, StateDictRoundTrip) {
  const Case& c = GetParam();
  torch::manual_seed(1);
  ContextModule a = create(c.type, c.keys);
  set_gate(*a, 0.5);
  a->train();
  const torch::Tensor x = torch::randn({B, C, H, W});
  run(a, x);  // a training forward moves running state (SN's u, online bases)
  a->eval();
  const torch::Tensor expected = run(a, x);
  const std::string bytes = save_state(*a);

  torch::manual_seed(2);
  ContextModule b = create(c.type, c.keys);
  b->eval();
  EXPECT_FALSE(torch::equal(run(b, x), expected)) << "a fresh instance already matches";
  load_state(*b, bytes);
  EXPECT_TRUE(torch::equal(run(b, x), expected));
  const auto pb = b->named_parameters(), bb = b->named_buffers();
  for (const auto& kv : a->named_parameters()) EXPECT_TRUE(torch::equal(pb[kv.key()], kv.value())) << kv.key();
  for (const auto& kv : a->named_buffers()) EXPECT_TRUE(torch::equal(bb[kv.key()], kv.value())) << kv.key();
}

TEST_P(ContextSweep, GradcheckDouble) {
  const Case& c = GetParam();
  const std::string keys = merge_keys(c.keys, exact_gradient_keys(c.type));
  torch::manual_seed(3);
  ContextModule m = create(c.type, keys);
  m->to(torch::kDouble);
  m->eval();  // SN's u fixed between the evaluations
  set_gate(*m, 0.7);
  std::vector<torch::Tensor> leaves;
  for (const auto& p : m->parameters()) leaves.push_back(p);
  const torch::Tensor x = torch::randn({B, C, H, W}, torch::kDouble).requires_grad_(true);
  leaves.push_back(x);
  EXPECT_TRUE(test::gradcheck([&] { return run(m, x); }, leaves)) << keys;
}

// R1 (gan/train/r1.h) differentiates D's input gradient again. With exact gradients, the penalty
// P = ||d sum(m(x) r) / dx||^2 has autograd's double backward equal to finite differences in
// double: no part of a module's backward is a constant to autograd (a hand-written backward must
// build its result from differentiable ops under create_graph, as layers/context/nmf_cpu.cpp does).
TEST_P(ContextSweep, SecondDerivativeGradcheckDouble) {
  const Case& c = GetParam();
  const std::string keys = merge_keys(c.keys, exact_gradient_keys(c.type));
  torch::manual_seed(5);
  ContextModule m = create(c.type, keys);
  m->to(torch::kDouble);
  m->eval();
  set_gate(*m, 0.7);
  std::vector<torch::Tensor> leaves;
  for (const auto& p : m->parameters()) leaves.push_back(p);
  const torch::Tensor x = torch::randn({B, C, H, W}, torch::kDouble).requires_grad_(true);
  const torch::Tensor r = torch::randn({B, C, H, W}, torch::kDouble);
  leaves.push_back(x);
  // gradcheck's finite differences evaluate f under no_grad; the penalty needs the gradient.
  const auto penalty = [&] {
    const bool outer = torch::GradMode::is_enabled();
    const torch::AutoGradMode grad_on(true);
    const torch::Tensor g = torch::autograd::grad({(run(m, x) * r).sum()}, {x}, {}, true, true)[0];
    const torch::Tensor p = g.square().sum();
    return outer ? p : p.detach();
  };
  EXPECT_TRUE(test::gradcheck(penalty, leaves, 1e-5, 1e-7, 1e-5, /*max_elements_per_leaf=*/16)) << keys;
}

// In double, with the gate open: outputs, input and parameter gradients of a train-mode
// forward/backward agree to rounding (rtol 1e-9, atol 1e-10 on values of order 1).
TEST_P(ContextSweep, ChannelsLastEqualsNchw) {
  const Case& c = GetParam();
  torch::manual_seed(4);
  ContextModule a = create(c.type, c.keys);
  ContextModule b = create(c.type, c.keys);
  a->to(torch::kDouble);
  b->to(torch::kDouble);
  set_gate(*a, 0.5);
  load_state(*b, save_state(*a));
  to_channels_last(*b);
  const torch::Tensor x = torch::randn({B, C, H, W}, torch::kDouble);
  const torch::Tensor r = torch::randn({B, C, H, W}, torch::kDouble);
  torch::Tensor xa = x.clone().requires_grad_(true);
  torch::Tensor xb = x.contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
  const torch::Tensor ya = run(a, xa), yb = run(b, xb);
  (ya * r).sum().backward();
  (yb * r).sum().backward();
  EXPECT_TRUE(close(yb.contiguous(), ya, 1e-9, 1e-10));
  EXPECT_TRUE(close(xb.grad().contiguous(), xa.grad(), 1e-9, 1e-10));
  test::expect_same_grads(*a, *b, 1e-9, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Registry, ContextSweep, ::testing::ValuesIn(registry_cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.label; });

}  // namespace test_context_registry
