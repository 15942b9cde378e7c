// What hamgan's hand-written CUDA kernels (layers/*_cuda.cu) are told about an activation, in
// plain C++ without LibTorch's types, so nvcc compiles them without ATen's headers.
#pragma once
#include <cstdint>

namespace hamgan::cuda {

enum class Dtype { f32, f64, bf16, f16 };

struct ActShape {
  int64_t n = 0, c = 0, hw = 0;  // N x C x H x W, hw = H * W
  bool channels_last = false;    // memory N H W C (else N C H W), both dense
};

}  // namespace hamgan::cuda
