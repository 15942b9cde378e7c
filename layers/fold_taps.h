// Shared by the folded convolutions (conv_avgpool, upsample_conv): a 3x3 weight's taps
// combined into another kernel by a constant tap matrix, K = T W T^T per (out, in) pair.
#pragma once
#include <torch/torch.h>

#include <initializer_list>

#include "layers/kernel_choice.h"

namespace hamgan {

// Where the folded forms run: train.folded_convs, in force per thread (layers/kernel_choice.h).
// They equal the plain forms up to summation order.

// Whether a block folds its convolution for input x. Where the policy is WherePays: in fp32
// always; under bf16 (or fp16) on a GPU (an H200's ImageNet-128 step, bf16 channels-last batch
// 256: 1.21x for SAGAN and HamGAN, the pool's and upsampling's kernels and 2.25x of the MACs
// gone) and on a CPU without AMX (measured on an AVX-512 BF16 AMD EPYC: D's fold 2.1-2.7x, G's
// 1.4-2x faster than the plain forms), but not where oneDNN runs the plain 3x3 on AMX tiles (a
// Xeon step was 5% slower folded).
bool folded_conv_pays(const torch::Tensor& x);

// Whether the blocks' shortcuts fold too: D's (2x2 pool, then 1x1 conv) as one 2x2 stride-2
// convolution in a block whose main path folds, G's nearest upsampling into its residual add
// (layers/upsample_conv.h, the same sums). WherePays: on GPUs, where the pool's channels-last
// backward is a slow kernel (15% of an H200's ImageNet-128 step before folding) and upsampling
// writes a full-size tensor; not on CPUs, where D's 4x MACs cost more than the pool (a D block's
// fp32 step 5-9% slower on a Xeon).
bool folded_shortcut_pays(const torch::Tensor& x);

// T W T^T for a [out, in, 3, 3] weight and the rows x 3 tap matrix `taps` (row-major); the
// result is [out, in, rows, rows], in the weight's precision (outside autocast), differentiable
// in W. `who` names the caller in the error for a weight of another shape.
torch::Tensor fold_3x3_taps(const torch::Tensor& w3, std::initializer_list<double> taps, const char* who);

}  // namespace hamgan
