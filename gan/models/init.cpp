#include "gan/models/init.h"

#include "core/error.h"

namespace hamgan {

void init_weights(torch::nn::Module& m, const std::string& scheme) {
  torch::NoGradGuard no_grad;
  for (auto& kv : m.named_parameters()) {
    const std::string& name = kv.key();
    torch::Tensor& p = kv.value();
    const bool is_weight = name.size() >= 6 && (name.rfind("weight") == name.size() - 6 ||
                                                name.rfind("weight_orig") == name.size() - 11);
    if (!is_weight || p.dim() < 2) continue;
    if (scheme == "orthogonal") torch::nn::init::orthogonal_(p);
    else if (scheme == "xavier") torch::nn::init::xavier_uniform_(p);
    else if (scheme == "normal") torch::nn::init::normal_(p, 0.0, 0.02);
    else fail("model.init: unknown scheme '", scheme, "' (expected orthogonal, xavier, normal)");
  }
}

}  // namespace hamgan
