// Nearest 2x upsampling followed by a 3x3 convolution (stride 1, padding 1), computed on the
// low-resolution input as four 2x2 convolutions, one per output phase (sub-pixel form):
// 4 x 4 = 16 MACs per input pixel and output channel instead of 4 x 9 = 36.
// Both forms are linear, so they agree up to rounding: output row 2i+a of the upsampled conv
// reads upsampled rows 2i+a-1 .. 2i+a+1, i.e. input rows i-1, i (a = 0, weights w0, w1+w2) or
// i, i+1 (a = 1, weights w0+w1, w2), and the same along columns. The 2x2 kernels are derived
// from the given (spectral-normalised) 3x3 weight by differentiable ops, so the parameters,
// checkpoints and gradients are those of the plain form.
#pragma once
#include <torch/torch.h>

#include "layers/kernel_choice.h"

namespace hamgan {

// The four phase kernels [4 * out, in, 2, 2] (phase 2a + b major) of up2 -> conv3x3 for a 3x3
// weight [out, in, 3, 3].
torch::Tensor upsample_folded_kernels(const torch::Tensor& w3);

// conv2d(interpolate(x, x2 nearest), w3, bias, padding 1) without the upsampled tensor, in the
// form kernel_choice().upsample_conv names; the result keeps x's memory format (NCHW or
// channels-last).
torch::Tensor upsample2_conv3x3(const torch::Tensor& x, const torch::Tensor& w3, const torch::Tensor& bias);

// The transposed form's kernel [in, out, 4, 4] for a 3x3 weight [out, in, 3, 3]. A stride-2
// transposed convolution with padding 1 adds x[i] K[k] to output row 2i + k - 1, so output row
// 2i + a gets input rows i (k = a + 1) and i - 1 + 2a (k = 3 - 2a): with the phases' sums above,
// K's taps along each axis are w2, w1 + w2, w0 + w1, w0.
torch::Tensor upsample_transposed_kernel(const torch::Tensor& w3);

// h + interpolate(s, x2 nearest) for h [N, C, 2H, 2W] and s [N, C, H, W] of one memory format: s
// broadcast over each 2x2 block of h, so every sum is the same one, bit for bit, without the
// upsampled tensor (G's residual add: one full-size write and read fewer, and no upsampling
// kernel). The result keeps h's memory format. Where upsample_add_kernel_pays(h), the add and
// its gradient for s (the sum of each 2x2 block of the output's gradient) run as hamgan's
// kernels (layers/upsample_add_cuda.cu): one pass each, in place of ATen's broadcast over a 6-d
// view and its reduction over two strided dimensions.
torch::Tensor add_upsampled2(const torch::Tensor& h, const torch::Tensor& s);

// train.upsample_add_kernel (layers/kernel_choice.h). Devices without the kernels take the ATen
// form under true as well: it is the kernels' reference.
bool upsample_add_kernel_pays(const torch::Tensor& h);

}  // namespace hamgan
