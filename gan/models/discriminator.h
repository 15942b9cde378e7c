// Projection discriminator (Miyato & Koyama 2018) of SAGAN/BigGAN: DBlocks with a context
// block after the block at the configured resolution, optionally the minibatch standard
// deviation before the last block (ProGAN; layers/minibatch_std.h), then ReLU, sum pooling, and
// out = linear(h) + sum(embed(y) * h) with SN linear and SN embedding.
#pragma once
#include <torch/torch.h>

#include "gan/config/config.h"
#include "gan/models/context_slot.h"
#include "gan/models/trace.h"
#include "layers/dblock.h"

namespace hamgan {

class DiscriminatorImpl : public torch::nn::Module {
 public:
  DiscriminatorImpl(const ModelConfig& model, const DiscriminatorConfig& d);
  // x: B x C x R x R, y: B int64 labels. Returns B logits.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& y, Trace* trace = nullptr);

  int64_t num_blocks() const { return static_cast<int64_t>(blocks_->size()); }
  // FreezeD (Mo et al. 2020): blocks 0..k-1, and the context module when it sits between two
  // of them, keep their weights: no gradient, and eval mode whatever train() says. Weights
  // loaded from a trained D (train.init_from) come with converged spectral-norm vectors: their
  // power iteration stops too and they compute a fixed function. `estimate_sigma` (weights
  // that never trained, whose u/v are random): the spectral norms follow train() as
  // torch.nn.utils.spectral_norm does for weights that do not train, so sigma converges to the
  // weights' largest singular value instead of staying a random u^T W v (far too small, and
  // each frozen block multiplying D's scale).
  void freeze_blocks(int64_t k, bool estimate_sigma = false);
  int64_t frozen_blocks() const { return frozen_; }
  // The parameters outside the frozen blocks (what D's optimizer updates).
  std::vector<torch::Tensor> trainable_parameters() const;
  // requires_grad on the trainable parameters only (the frozen stay off).
  void set_trainable(bool on);
  void train(bool on = true) override;

 private:
  std::vector<torch::nn::Module*> frozen_modules() const;
  int64_t frozen_ = 0;
  bool estimate_sigma_ = false;
  torch::nn::ModuleList blocks_;
  ContextSlot context_;
  int64_t mbstd_group_ = 0, mbstd_features_ = 1;
  SNLinear linear_{nullptr};
  SNEmbedding embed_{nullptr};
};
TORCH_MODULE(Discriminator);

}  // namespace hamgan
