// Projection discriminator (Miyato & Koyama 2018) of SAGAN/BigGAN: DBlocks with a context
// block after the block at the configured resolution, then ReLU, sum pooling, and
// out = linear(h) + sum(embed(y) * h) with SN linear and SN embedding.
#pragma once
#include <torch/torch.h>

#include "gan/config.h"
#include "gan/models/context_slot.h"
#include "gan/models/trace.h"
#include "layers/dblock.h"

namespace hamgan {

class DiscriminatorImpl : public torch::nn::Module {
 public:
  DiscriminatorImpl(const ModelConfig& model, const DiscriminatorConfig& d);
  // x: B x C x R x R, y: B int64 labels. Returns B logits.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& y, Trace* trace = nullptr);

 private:
  torch::nn::ModuleList blocks_;
  ContextSlot context_;
  SNLinear linear_{nullptr};
  SNEmbedding embed_{nullptr};
};
TORCH_MODULE(Discriminator);

}  // namespace hamgan
