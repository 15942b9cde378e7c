#include "layers/context/stt_random_factorized.h"

namespace hamgan {

void parse_stt_kron_keys(ConfigNode& node, SttRandomFactorizedOptions& o) {
  using R = SttRandomFactorizedOptions;
  static const KeyTable<R> table(OnResume::Model, {
      learned_key(&R::learned),
      init_std_key(&R::init_std),
      keys::integers("rows", &R::rows, 1, 1 << 20, "R = R_1 (x) ... (x) R_N: row sizes of the R_i; []: [H, W]")
          .also("product H*W"),
      keys::integers("cols", &R::cols, 1, 1 << 20, "column sizes of the R_i; []: [H, W]")
          .also("as many as `rows`, product H*W"),
  });
  table.read(node, o);
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
