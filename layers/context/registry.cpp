// The context-module registry: adding a module is its own file plus one line here.
#include "core/error.h"
#include "layers/context/cd.h"
#include "layers/context/context.h"
#include "layers/context/hamburger.h"
#include "layers/context/kronecker_attention.h"
#include "layers/context/nmf.h"
#include "layers/context/self_attention.h"
#include "layers/context/siamese_attention.h"
#include "layers/context/stt_dense.h"
#include "layers/context/stt_dense_factorized.h"
#include "layers/context/stt_mixture.h"
#include "layers/context/stt_random.h"
#include "layers/context/stt_random_factorized.h"
#include "layers/context/vq.h"

namespace hamgan {

namespace {
struct NoOptions : ContextOptions {};
ContextEntry none_entry() {
  return {"none", [](ConfigNode&) { return std::make_shared<const NoOptions>(); },
          [](const ContextSpec&) { return ContextModule(); }};
}
}  // namespace

const std::vector<ContextEntry>& context_registry() {
  static const std::vector<ContextEntry> entries = {
      none_entry(),
      {"self_attention", parse_self_attention_options, make_self_attention},
      {"ham_nmf", [](ConfigNode& n) { return parse_hamburger_options(n, parse_nmf); }, make_hamburger},
      {"ham_vq", [](ConfigNode& n) { return parse_hamburger_options(n, parse_vq); }, make_hamburger},
      {"ham_cd", [](ConfigNode& n) { return parse_hamburger_options(n, parse_cd); }, make_hamburger},
      {"kao_kv", parse_kao_kv_options, make_kao},
      {"kao_qkv", parse_kao_qkv_options, make_kao},
      {"sao", parse_sao_options, make_sao},
      {"stt_dense", parse_stt_dense_options, make_stt_dense},
      {"stt_random", parse_stt_random_options, make_stt_random},
      {"stt_dense_factorized", parse_stt_dense_factorized_options, make_stt_dense_factorized},
      {"stt_random_factorized", parse_stt_random_factorized_options, make_stt_random_factorized},
      {"stt_mixture", parse_stt_mixture_options, make_stt_mixture},
  };
  return entries;
}

std::vector<std::string> context_names() {
  std::vector<std::string> names;
  for (const auto& e : context_registry()) names.push_back(e.name);
  return names;
}

const ContextEntry& context_entry(const std::string& name) {
  for (const auto& e : context_registry())
    if (e.name == name) return e;
  std::string all;
  for (const auto& n : context_names()) all += (all.empty() ? "" : ", ") + n;
  fail("unknown context module '", name, "' (known: ", all, ")");
}

namespace {
const KeyTable<ContextConfig>& block_keys() {
  using C = ContextConfig;
  static const KeyTable<C> table(OnResume::Model, {
      keys::choice("type", &C::type, context_names, "the context module (`none`: no block)"),
      keys::integer("resolution", &C::resolution, 4, 1024, "the feature resolution the block sits at")
          .also("a feature resolution of the network (8, 16, 32 at 32 px; the error lists them)"),
  });
  return table;
}
}  // namespace

ContextConfig parse_context_config(ConfigNode node) {
  ContextConfig c;
  block_keys().read(node, c);
  c.options = context_entry(c.type).parse(node);
  node.finish();
  return c;
}

std::vector<KeyInfo> context_keys(const std::string& type) {
  std::vector<KeyInfo> listing;
  auto source = std::make_shared<ConfigSource>();
  source->file = "defaults";
  source->listing = &listing;
  YAML::Node n(YAML::NodeType::Map);
  n["type"] = type;
  parse_context_config(ConfigNode(n, "", source));
  return listing;
}

}  // namespace hamgan
