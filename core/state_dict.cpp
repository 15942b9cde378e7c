#include "core/state_dict.h"

#include <sstream>

#include "core/error.h"

namespace hamgan {

TensorMap state_dict(const torch::nn::Module& m) {
  TensorMap out;
  for (const auto& kv : m.named_parameters()) out[kv.key()] = kv.value();
  for (const auto& kv : m.named_buffers()) out[kv.key()] = kv.value();
  return out;
}

void load_state_dict(torch::nn::Module& m, const TensorMap& values, const std::string& what) {
  TensorMap dest = state_dict(m);
  std::ostringstream problems;
  int n = 0;
  auto note = [&](const std::string& s) {
    if (n++ < 20) problems << "\n  " << s;
  };
  for (const auto& [name, t] : dest) {
    auto it = values.find(name);
    if (it == values.end()) note("missing key '" + name + "'");
    else if (it->second.sizes() != t.sizes()) {
      std::ostringstream os;
      os << "key '" << name << "': expected shape " << t.sizes() << ", got " << it->second.sizes();
      note(os.str());
    }
  }
  for (const auto& [name, t] : values)
    if (!dest.count(name)) note("unexpected key '" + name + "'");
  if (n) fail(what, ": state does not match the model (", n, " problems):", problems.str());
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : dest) t.copy_(values.at(name));
}

}  // namespace hamgan
