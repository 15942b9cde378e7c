// Synchronised batch norm (as torch.nn.SyncBatchNorm): in training mode the statistics are
// those of the global batch over all data-parallel ranks, through the differentiable
// all_reduce_sum, so autograd of the global mean and variance is exact. Eval mode is bn's.
#pragma once
#include <torch/torch.h>

#include "core/compat.h"
#include "layers/all_reduce_sum.h"

namespace hamgan {

// `bn`'s parameters, buffers and options, with global-batch statistics: x is this rank's
// B x C x H x W share. Running stats get the global mean and unbiased variance.
torch::Tensor sync_batch_norm(torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x,
                              BatchReducer& reducer);

// bn->forward(x) without a reducer, sync_batch_norm with one. A bf16/fp16 x (autocast) is
// normalised in fp32: batch statistics and running averages keep fp32 precision.
inline torch::Tensor batch_norm_2d(torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x,
                                   BatchReducer* reducer) {
  const torch::Tensor xf = compat::is_reduced_float(x) ? x.to(torch::kFloat) : x;
  return reducer ? sync_batch_norm(bn, xf, *reducer) : bn.forward(xf);
}

}  // namespace hamgan
