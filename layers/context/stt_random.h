// Tensor Random Synthesizer (STT paper Sec. 3.2, Eq. 18): Y = Softmax(R) V with R an
// HW x HW matrix, randomly initialised and either learned or fixed; no query at all.
// Learned R at 32x32 is 1024^2 = 1,048,576 parameters.
#pragma once
#include "layers/context/stt_attention.h"

namespace hamgan {

struct SttRandomOptions : SttCommonOptions {
  bool learned = true;
  double init_std = 1.0;
};

class SttRandomImpl : public SttAttentionImpl {
 public:
  SttRandomImpl(const ContextSpec& spec, const SttRandomOptions& opt);
  torch::Tensor r;  // HW x HW

 protected:
  torch::Tensor logits(const torch::Tensor& query) override;
};

std::shared_ptr<const ContextOptions> parse_stt_random_options(ConfigNode& node);
ContextModule make_stt_random(const ContextSpec& spec);

}  // namespace hamgan
