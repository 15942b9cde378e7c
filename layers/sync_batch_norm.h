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

// BN's running averages after a training step, from the batch's mean and biased variance over
// `count` values per channel (a tensor: no host read): the unbiased variance, momentum's EMA, or
// the cumulative average where momentum is unset.
void update_running_stats(torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& mean, const torch::Tensor& var,
                          const torch::Tensor& count);

// bn->forward(x) without a reducer, sync_batch_norm with one. A bf16/fp16 x (autocast) is
// normalised in fp32: batch statistics and running averages keep fp32 precision.
inline torch::Tensor batch_norm_2d(torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x,
                                   BatchReducer* reducer) {
  const torch::Tensor xf = compat::is_reduced_float(x) ? x.to(torch::kFloat) : x;
  return reducer ? sync_batch_norm(bn, xf, *reducer) : bn.forward(xf);
}

}  // namespace hamgan
