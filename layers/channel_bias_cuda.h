// The CUDA kernel of a convolution's bias add (layers/channel_bias.h), behind a plain C++
// interface (layers/cuda_types.h).
#pragma once
#include "layers/cuda_types.h"

namespace hamgan::cuda {

// y = x + bias[c], or max(x + bias[c], 0) with `relu`, in one pass: x and y in the activation
// dtype (y may be x), bias in the accumulation dtype (float, or double for double activations),
// rounded once on the store; a NaN stays NaN, as in torch::relu.
// Returns nullptr, or CUDA's error text for the launch. `stream` is a cudaStream_t.
const char* channel_bias_forward(Dtype t, const void* x, const void* bias, void* y, const ActShape& s,
                                 bool relu, void* stream);

}  // namespace hamgan::cuda
