#include "layers/context/stt_random.h"

namespace hamgan {

SttRandomImpl::SttRandomImpl(const ContextSpec& spec, const SttRandomOptions& opt)
    : SttAttentionImpl("stt_random", spec, opt, false) {
  const int64_t n = height_ * width_;
  torch::Tensor init = torch::randn({n, n}) * opt.init_std;
  r = opt.learned ? register_parameter("r", init) : register_buffer("r", init);
}

torch::Tensor SttRandomImpl::logits(const torch::Tensor&) { return r; }

std::shared_ptr<const ContextOptions> parse_stt_random_options(ConfigNode& node) {
  auto o = std::make_shared<SttRandomOptions>();
  parse_stt_common(node, *o, false);
  static const KeyTable<SttRandomOptions> table(
      OnResume::Model, {learned_key(&SttRandomOptions::learned), init_std_key(&SttRandomOptions::init_std)});
  table.read(node, *o);
  return o;
}

ContextModule make_stt_random(const ContextSpec& spec) {
  return std::make_shared<SttRandomImpl>(spec, context_options<SttRandomOptions>(spec));
}

}  // namespace hamgan
