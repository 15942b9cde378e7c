// A convolution's bias added in one pass of hamgan's own (train.bias_kernel):
//   y[n, c, h, w] = conv(x, w)[n, c, h, w] + b[c]
// Under bf16 autocast the plain form (torch::conv2d with its bias) rounds b to bf16 and adds it
// with ATen's generic broadcast kernel, one element per load; the kernel of
// layers/channel_bias_cuda.cu adds b in fp32 with 16-byte loads and rounds once. The gradient
// is the plain form's: dx = dy, db = sum over n, h, w of dy (accumulated in fp32).
// The ReLU that follows D's first convolution in each block rides in the same pass,
//   y = max(conv(x, w) + b, 0),  dx = dy [y > 0],  db = sum over n, h, w of dx,
// one read and one write of the activation instead of two each way.
#pragma once
#include <torch/torch.h>

#include "layers/kernel_choice.h"

namespace hamgan {

// train.bias_kernel (layers/kernel_choice.h).
bool bias_kernel_pays(const torch::Tensor& x);

// y + b[c] for y (N x C x H x W, any float dtype, dense in either memory format) and b (C);
// differentiable in both. y keeps its dtype and memory format; b's dtype may be wider.
torch::Tensor add_channel_bias(const torch::Tensor& y, const torch::Tensor& b);
// relu(y + b[c]), rounded once: bit-equal to relu(add_channel_bias(y, b)).
torch::Tensor add_channel_bias_relu(const torch::Tensor& y, const torch::Tensor& b);

// torch::conv2d(x, w, b, stride, padding), the bias added by add_channel_bias where
// bias_kernel_pays(x).
torch::Tensor conv2d_bias(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                          int64_t stride, int64_t padding);
// torch::relu(torch::conv2d(x, w, b, stride, padding)), through add_channel_bias_relu where
// bias_kernel_pays(x).
torch::Tensor conv2d_bias_relu(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                               int64_t stride, int64_t padding);

}  // namespace hamgan
