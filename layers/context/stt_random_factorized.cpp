#include "layers/context/stt_random_factorized.h"

namespace hamgan {

void parse_stt_kron_keys(ConfigNode& node, SttRandomFactorizedOptions& o) {
  o.learned = node.boolean("learned", o.learned);
  o.init_std = node.real("init_std", o.init_std, 0.0, 100.0);
  o.rows = node.integers("rows", o.rows, 1, 1 << 20);
  o.cols = node.integers("cols", o.cols, 1, 1 << 20);
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> stt_kron_shape(
    const SttRandomFactorizedOptions& o, int64_t h, int64_t w) {
  auto rows = resolve_factors(o, "rows", o.rows, {h, w}, h * w, "H*W");
  auto cols = resolve_factors(o, "cols", o.cols, {h, w}, h * w, "H*W", rows.size());
  return {rows, cols};
}

SttRandomFactorizedImpl::SttRandomFactorizedImpl(const ContextSpec& spec,
                                                 const SttRandomFactorizedOptions& opt)
    : SttAttentionImpl("stt_random_factorized", spec, opt, false) {
  const auto shape = stt_kron_shape(opt, height_, width_);
  factors = register_kron_factors(*this, "r", shape.first, shape.second, opt.init_std,
                                  opt.learned);
}

torch::Tensor SttRandomFactorizedImpl::logits(const torch::Tensor&) {
  return kron_chain(factors);
}

std::shared_ptr<const ContextOptions> parse_stt_random_factorized_options(ConfigNode& node) {
  auto o = std::make_shared<SttRandomFactorizedOptions>();
  parse_stt_common(node, *o, false);
  parse_stt_kron_keys(node, *o);
  return o;
}

ContextModule make_stt_random_factorized(const ContextSpec& spec) {
  return std::make_shared<SttRandomFactorizedImpl>(
      spec, context_options<SttRandomFactorizedOptions>(spec));
}

}  // namespace hamgan
