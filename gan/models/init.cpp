#include "gan/models/init.h"

#include "core/error.h"

namespace hamgan {

void init_weights(torch::nn::Module& m, InitScheme scheme) {
  torch::NoGradGuard no_grad;
  for (auto& kv : m.named_parameters()) {
    const std::string& name = kv.key();
    torch::Tensor& p = kv.value();
    const bool is_weight = name.size() >= 6 && (name.rfind("weight") == name.size() - 6 ||
                                                name.rfind("weight_orig") == name.size() - 11);
    if (!is_weight || p.dim() < 2) continue;
    switch (scheme) {
      case InitScheme::Orthogonal: torch::nn::init::orthogonal_(p); break;
      case InitScheme::Xavier: torch::nn::init::xavier_uniform_(p); break;
      case InitScheme::Normal: torch::nn::init::normal_(p, 0.0, 0.02); break;
    }
  }
}

}  // namespace hamgan
