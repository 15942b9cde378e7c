// Class-conditional SAGAN/BigGAN generator: z (and class) -> SN linear -> 4x4 map ->
// GBlocks (x2 each) with a context block after the block at the configured resolution
// -> BN, ReLU, 3x3 SN conv, tanh.
#pragma once
#include <torch/torch.h>

#include "gan/config/config.h"
#include "gan/models/context_slot.h"
#include "gan/models/trace.h"
#include "layers/gblock.h"

namespace hamgan {

class GeneratorImpl : public torch::nn::Module {
 public:
  GeneratorImpl(const ModelConfig& model, const GeneratorConfig& g);
  // z: B x z_dim float; y: B int64 class labels. Returns B x C x R x R in [-1, 1].
  torch::Tensor forward(const torch::Tensor& z, const torch::Tensor& y, Trace* trace = nullptr);

  int64_t z_dim() const { return z_dim_; }
  // Synchronised BN over data-parallel ranks for every BN in G (null: per-rank statistics).
  void set_batch_reducer(BatchReducer* r);

 private:
  int64_t z_dim_, chunk_ = 0, bottom_ch_ = 0;
  bool hier_;
  torch::nn::Embedding shared_{nullptr};
  SNLinear linear_{nullptr};
  torch::nn::ModuleList blocks_;
  ContextSlot context_;
  torch::nn::BatchNorm2d out_bn_{nullptr};
  SNConv2d out_conv_{nullptr};
  BatchReducer* reducer_ = nullptr;  // not owned
};
TORCH_MODULE(Generator);

}  // namespace hamgan
