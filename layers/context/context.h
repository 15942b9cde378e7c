// The global-context slot shared by G and D. Every module maps B x C x H x W to the same
// shape and is created by name from the config (see registry.cpp: one line per module).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config_keys.h"
#include "layers/cond_bn.h"
#include "layers/spectral_norm.h"

namespace hamgan {

// A module's parsed and validated `options` block. Each module derives its own.
struct ContextOptions {
  virtual ~ContextOptions() = default;
};

// Everything a module needs to build itself at its place in G or D.
struct ContextSpec {
  int64_t channels = 0;
  int64_t height = 0, width = 0;  // feature size at the slot (fixed for STT)
  CondSpec cond;                  // kind none in D; G's block condition in G
  double bn_eps = 1e-5;
  SNOptions sn;
  std::shared_ptr<const ContextOptions> options;
};

class ContextModuleImpl : public torch::nn::Module {
 public:
  // cond: the same condition the neighbouring G blocks get; undefined in D.
  virtual torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond) = 0;
};
using ContextModule = std::shared_ptr<ContextModuleImpl>;

struct ContextEntry {
  std::string name;
  // Reads the module's keys from its config block (unknown keys are checked by the caller).
  std::function<std::shared_ptr<const ContextOptions>(ConfigNode&)> parse;
  // nullptr for `none`.
  std::function<ContextModule(const ContextSpec&)> create;
};

const std::vector<ContextEntry>& context_registry();
const ContextEntry& context_entry(const std::string& name);  // throws naming the choices
std::vector<std::string> context_names();

// Parses a `context:` block: type, resolution, and the module's own keys.
struct ContextConfig {
  std::string type = "none";
  int64_t resolution = 32;
  std::shared_ptr<const ContextOptions> options;
};
ContextConfig parse_context_config(ConfigNode node);  // defaults: the struct's
// The keys a block of `type` reads (type, resolution, then the module's own table rows), with
// their defaults: what `hamgan info --keys` lists.
std::vector<KeyInfo> context_keys(const std::string& type);

// Downcast of spec.options to the module's own options type.
template <typename T>
const T& context_options(const ContextSpec& spec) {
  auto p = std::dynamic_pointer_cast<const T>(spec.options);
  if (!p) throw std::logic_error("context module built with another module's options");
  return *p;
}

}  // namespace hamgan
