// The CUDA kernels of G's upsampled shortcut add (layers/upsample_conv.h, add_upsampled2),
// behind a plain C++ interface (layers/cuda_types.h).
#pragma once
#include "layers/cuda_types.h"

namespace hamgan::cuda {

// y = h + s, s read at (y / 2, x / 2): h and y of `hs` (N x C x 2H x 2W), s N x C x H x W, all
// three dense in hs's memory format and one dtype; the sum in the accumulation type, rounded once.
// Returns nullptr, or CUDA's error text for the launch. `stream` is a cudaStream_t.
const char* upsample_add_forward(Dtype t, const void* h, const void* s, void* y, const ActShape& hs,
                                 int64_t height, int64_t width, void* stream);

// ds = the sum of g over each 2x2 block (the gradient of s): g as h above, ds as s, the four
// terms added in the accumulation type in the order (0, 0), (0, 1), (1, 0), (1, 1), rounded once.
const char* upsample_add_backward(Dtype t, const void* g, void* ds, const ActShape& hs, int64_t height,
                                  int64_t width, void* stream);

}  // namespace hamgan::cuda
