// A 3x3 convolution (stride 1, padding 1) followed by 2x2 average pooling, computed as one
// 4x4 convolution of stride 2 and padding 1: 16 MACs per output instead of 4 x 9 = 36.
// Both forms are linear, so they agree up to rounding: output (i, j) averages the conv at rows
// 2i and 2i+1, whose 3x3 windows together cover input rows 2i-1 .. 2i+2 with weights
// (w[t] + w[t-1]) / 2 (w[-1] = w[3] = 0), and the same along columns. The 4x4 kernel is derived
// from the given (spectral-normalised) 3x3 weight by differentiable ops, so the parameters,
// checkpoints and gradients are those of the plain form.
#pragma once
#include <torch/torch.h>

namespace hamgan {

// The 4x4 kernel [out, in, 4, 4] of conv3x3 -> avgpool2x2 for a 3x3 weight [out, in, 3, 3].
torch::Tensor avgpool_folded_kernel(const torch::Tensor& w3);

// avg_pool2d(conv2d(x, w3, bias, padding 1), 2) in one strided convolution; any H, W (odd
// sizes floor as avg_pool2d does).
torch::Tensor conv3x3_avgpool2(const torch::Tensor& x, const torch::Tensor& w3, const torch::Tensor& bias);

// D's downsampling shortcut, conv2d(avg_pool2d(x, 2), w1, bias) for a 1x1 weight [out, in, 1, 1],
// as one 2x2 convolution of stride 2 with w1 / 4 at each tap: both are linear, so pooling and
// the 1x1 conv commute and the 2x2 kernel sums the four pixels the pool averaged. On a GPU it
// removes avg_pool2d, whose channels-last backward is a slow kernel (the eager script's device
// profile, docs/gpu/README.md), for 4x the 1x1's MACs (imagenet128_sagan's D forward: 6.15 ->
// 6.35 GFLOP per image). Differentiable in w1, derived in its precision; any H, W (odd sizes
// floor as avg_pool2d does).
torch::Tensor avgpool2_conv1x1(const torch::Tensor& x, const torch::Tensor& w1, const torch::Tensor& bias);

}  // namespace hamgan
