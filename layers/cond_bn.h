// Class-conditional batch norm (de Vries et al. 2017; SAGAN, BigGAN): BN without affine,
// then y = bn(x) * (1 + gain(c)) + bias(c). The condition c is either the class label
// (per-class embeddings) or BigGAN's vector [shared_embedding(y), z_chunk] projected by
// a linear layer per block (hierarchical z).
#pragma once
#include <torch/torch.h>

#include "layers/spectral_norm.h"
#include "layers/sync_batch_norm.h"

namespace hamgan {

enum class CondKind { none, labels, vector };

struct CondSpec {
  CondKind kind = CondKind::none;
  int64_t dim = 0;  // labels: number of classes; vector: vector length
};

class CondBatchNorm2dImpl : public torch::nn::Module {
 public:
  CondBatchNorm2dImpl(int64_t channels, CondSpec cond, double bn_eps, SNOptions sn);
  // cond: int64 labels (B) or a float matrix (B x dim), as given by the CondSpec.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond);
  // relu(forward(x, cond)), fused where train.fused_cbn_relu says (layers/cbn_relu.h); the
  // synchronised statistics of data parallel take the plain form.
  torch::Tensor forward_relu(const torch::Tensor& x, const torch::Tensor& cond);
  // Non-null: training-mode statistics over all ranks (synchronised BN); not owned.
  void set_batch_reducer(BatchReducer* r) { reducer_ = r; }

 private:
  // The per-sample gain and bias (B x C) of the condition.
  std::pair<torch::Tensor, torch::Tensor> gain_bias(const torch::Tensor& cond);

  CondSpec cond_;
  BatchReducer* reducer_ = nullptr;
  torch::nn::BatchNorm2d bn_{nullptr};
  torch::nn::Embedding gain_emb_{nullptr}, bias_emb_{nullptr};
  SNLinear gain_lin_{nullptr}, bias_lin_{nullptr};
};
TORCH_MODULE(CondBatchNorm2d);

}  // namespace hamgan
