#include "layers/cond_bn.h"

#include "core/error.h"
#include "layers/cbn_relu.h"

namespace hamgan {

CondBatchNorm2dImpl::CondBatchNorm2dImpl(int64_t channels, CondSpec cond, double bn_eps,
                                         SNOptions sn)
    : cond_(cond) {
  bn_ = register_module(
      "bn", torch::nn::BatchNorm2d(
                torch::nn::BatchNorm2dOptions(channels).affine(false).eps(bn_eps)));
  if (cond.kind == CondKind::labels) {
    gain_emb_ = register_module("gain", torch::nn::Embedding(cond.dim, channels));
    bias_emb_ = register_module("bias", torch::nn::Embedding(cond.dim, channels));
    torch::NoGradGuard no_grad;
    gain_emb_->weight.zero_();  // start as plain BN
    bias_emb_->weight.zero_();
  } else if (cond.kind == CondKind::vector) {
    gain_lin_ = register_module("gain", SNLinear(cond.dim, channels, false, sn));
    bias_lin_ = register_module("bias", SNLinear(cond.dim, channels, false, sn));
  } else {
    fail("CondBatchNorm2d: needs a condition (class labels or a vector)");
  }
}

std::pair<torch::Tensor, torch::Tensor> CondBatchNorm2dImpl::gain_bias(const torch::Tensor& cond) {
  if (cond_.kind == CondKind::labels) return {gain_emb_->forward(cond), bias_emb_->forward(cond)};
  return {gain_lin_->forward(cond), bias_lin_->forward(cond)};
}

torch::Tensor CondBatchNorm2dImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  const auto [gain, bias] = gain_bias(cond);
  const auto b = x.size(0), c = x.size(1);
  return batch_norm_2d(*bn_, x, reducer_) * (1 + gain.view({b, c, 1, 1})) + bias.view({b, c, 1, 1});
}

torch::Tensor CondBatchNorm2dImpl::forward_relu(const torch::Tensor& x, const torch::Tensor& cond) {
  if (reducer_ || !fused_cbn_relu_pays(x)) return torch::relu(forward(x, cond));
  const auto [gain, bias] = gain_bias(cond);
  return cbn_relu(*bn_, x, 1 + gain, bias);
}

}  // namespace hamgan
