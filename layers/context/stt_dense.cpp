#include "layers/context/stt_dense.h"

namespace hamgan {

SttDenseImpl::SttDenseImpl(const ContextSpec& spec, const SttDenseOptions& opt)
    : SttAttentionImpl("stt_dense", spec, opt, true) {
  a = register_stt_dense(*this, height_, width_, qk_channels());
}

torch::Tensor SttDenseImpl::logits(const torch::Tensor& query) {
  return stt_dense_logits(query, a);
}

std::shared_ptr<const ContextOptions> parse_stt_dense_options(ConfigNode& node) {
  auto o = std::make_shared<SttDenseOptions>();
  parse_stt_common(node, *o, true);
  return o;
}

ContextModule make_stt_dense(const ContextSpec& spec) {
  return std::make_shared<SttDenseImpl>(spec, context_options<SttDenseOptions>(spec));
}

}  // namespace hamgan
