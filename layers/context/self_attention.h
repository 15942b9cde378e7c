// SAGAN self-attention (Zhang et al. 2019, Sec. 3; BigGAN's layers.Attention) on the
// attention base (attention.h), SAGAN form only (its paper is SAGAN):
//   theta = W_theta x (C/8), phi = maxpool2(W_phi x) (C/8), g = maxpool2(W_g x) (C/2)
//   beta = softmax_keys(theta^T phi)   (no 1/sqrt(d) scaling)
//   y = x + gamma * W_o(g beta^T),  gamma = 0 at init; all 1x1 SN convs without bias.
#pragma once
#include "layers/context/attention.h"

namespace hamgan {

struct SelfAttentionOptions : AttentionOptions {
  bool pool = true;
};

class SelfAttentionImpl : public AttentionImpl {
 public:
  SelfAttentionImpl(int64_t channels, const SelfAttentionOptions& opt, SNOptions sn);

  // BigGAN's names for the base's q, k, v (same modules; o is o).
  SNConv2d theta{nullptr}, phi{nullptr}, g{nullptr};

 protected:
  torch::Tensor branch(const torch::Tensor& x) override;

 private:
  bool pool_;
};

std::shared_ptr<const ContextOptions> parse_self_attention_options(ConfigNode& node);
ContextModule make_self_attention(const ContextSpec& spec);

}  // namespace hamgan
