// Tensor Dense Synthesizer (STT paper Sec. 3.2, Eq. 14-17):
//   Y = Softmax(Z_H + Z_W + Z_C) V, each Z_* an n-mode product of the query tensor.
#pragma once
#include "layers/context/stt_attention.h"

namespace hamgan {

struct SttDenseOptions : SttCommonOptions {};

class SttDenseImpl : public SttAttentionImpl {
 public:
  SttDenseImpl(const ContextSpec& spec, const SttDenseOptions& opt);
  SttDenseWeights a;

 protected:
  torch::Tensor logits(const torch::Tensor& query) override;
};

std::shared_ptr<const ContextOptions> parse_stt_dense_options(ConfigNode& node);
ContextModule make_stt_dense(const ContextSpec& spec);

}  // namespace hamgan
