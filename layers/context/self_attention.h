// SAGAN self-attention (Zhang et al. 2019, Sec. 3; BigGAN's layers.Attention):
//   theta = W_theta x (C/8), phi = maxpool2(W_phi x) (C/8), g = maxpool2(W_g x) (C/2)
//   beta = softmax_keys(theta^T phi)   (no 1/sqrt(d) scaling)
//   y = x + gamma * W_o(g beta^T),  gamma = 0 at init; all 1x1 SN convs without bias.
#pragma once
#include "layers/context/context.h"

namespace hamgan {

struct SelfAttentionOptions : ContextOptions {
  int64_t qk_divisor = 8;  // query/key channels = C / qk_divisor
  int64_t v_divisor = 2;   // value channels = C / v_divisor
  bool pool = true;        // 2x2 max pool on keys and values
};

class SelfAttentionImpl : public ContextModuleImpl {
 public:
  SelfAttentionImpl(int64_t channels, const SelfAttentionOptions& opt, SNOptions sn);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond = {}) override;

  SNConv2d theta{nullptr}, phi{nullptr}, g{nullptr}, o{nullptr};
  torch::Tensor gamma;

 private:
  SelfAttentionOptions opt_;
};

std::shared_ptr<const ContextOptions> parse_self_attention_options(ConfigNode& node);
ContextModule make_self_attention(const ContextSpec& spec);

}  // namespace hamgan
