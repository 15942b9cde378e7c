#include "layers/context/stt_mixture.h"

#include <cmath>

namespace hamgan {

SttMixtureImpl::SttMixtureImpl(const ContextSpec& spec, const SttMixtureOptions& opt)
    : SttAttentionImpl("stt_mixture", spec, opt, true) {
  a = register_stt_dense(*this, height_, width_, qk_channels());
  const auto shape = stt_kron_shape(opt, height_, width_);
  factors = register_kron_factors(*this, "r", shape.first, shape.second, opt.init_std,
                                  opt.learned);
  theta_logits = register_parameter(
      "theta_logits",
      torch::tensor({std::log(opt.theta_init), std::log1p(-opt.theta_init)}, torch::kFloat));
}

torch::Tensor SttMixtureImpl::theta() { return torch::softmax(theta_logits, 0); }

torch::Tensor SttMixtureImpl::logits(const torch::Tensor& query) {
  const torch::Tensor t = theta();
  return t[0] * kron_chain(factors) + t[1] * stt_dense_logits(query, a);  // Eq. 23
}

std::shared_ptr<const ContextOptions> parse_stt_mixture_options(ConfigNode& node) {
  auto o = std::make_shared<SttMixtureOptions>();
  parse_stt_common(node, *o, true);
  parse_stt_kron_keys(node, *o);
  // Inside (0, 1): theta = softmax(log theta_init, log(1 - theta_init)) needs both > 0.
  static const KeyTable<SttMixtureOptions> table(OnResume::Model, {
      keys::real("theta_init", &SttMixtureOptions::theta_init, closed(1e-6, 1.0 - 1e-6),
                 "weight of the random (Kronecker) part at init; the dense part gets 1 - theta_init"),
  });
  table.read(node, *o);
  return o;
}

ContextModule make_stt_mixture(const ContextSpec& spec) {
  return std::make_shared<SttMixtureImpl>(spec, context_options<SttMixtureOptions>(spec));
}

}  // namespace hamgan
