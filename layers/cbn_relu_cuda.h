// The CUDA kernels of the fused conditional BN + ReLU (layers/cbn_relu.h), behind a plain C++
// interface (layers/cuda_types.h). Each is one pass over the activation: x, y, g and dx in the
// activation dtype; the per-(sample, channel) coefficients and sums in the accumulation dtype
// (float, or double for double activations).
#pragma once
#include "layers/cuda_types.h"

namespace hamgan::cuda {

// Each returns nullptr, or CUDA's error text for the launch. `stream` is a cudaStream_t.
// y = max(x * scale[n, c] + shift[n, c], 0)
const char* cbn_relu_forward(Dtype t, const void* x, const void* scale, const void* shift, void* y,
                             const ActShape& s, void* stream);
// s0[n, c] = sum_hw gm, s1[n, c] = sum_hw gm * x, with gm = g where y > 0, else 0
const char* cbn_relu_reduce(Dtype t, const void* g, const void* y, const void* x, void* s0, void* s1,
                            const ActShape& s, void* stream);
// dx = gm * k1[n, c] + x * k2[c] + k3[c]
const char* cbn_relu_backward(Dtype t, const void* g, const void* y, const void* x, const void* k1,
                              const void* k2, const void* k3, void* dx, const ActShape& s, void* stream);

}  // namespace hamgan::cuda
