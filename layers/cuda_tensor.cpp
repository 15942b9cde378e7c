#include "layers/cuda_tensor.h"

#include "core/compat.h"
#include "core/error.h"

namespace hamgan {

bool cuda_kernels_built() {
#ifdef HAMGAN_CUDA_KERNELS
  return true;
#else
  return false;
#endif
}

bool channels_last(const torch::Tensor& x) {
  return !x.is_contiguous() && x.is_contiguous(torch::MemoryFormat::ChannelsLast);
}

torch::Tensor dense_like(const torch::Tensor& t, const torch::Tensor& layout) {
  return t.contiguous(channels_last(layout) ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous);
}

cuda::Dtype kernel_dtype(const torch::Tensor& x, const char* op) {
  switch (x.scalar_type()) {
    case torch::kFloat: return cuda::Dtype::f32;
    case torch::kDouble: return cuda::Dtype::f64;
    case torch::kBFloat16: return cuda::Dtype::bf16;
    case torch::kHalf: return cuda::Dtype::f16;
    default: fail(op, ": expected a floating-point activation, got ", x.scalar_type());
  }
}

cuda::ActShape kernel_shape(const torch::Tensor& x) {
  cuda::ActShape s;
  s.n = x.size(0);
  s.c = x.size(1);
  s.hw = x.size(2) * x.size(3);
  s.channels_last = channels_last(x);
  return s;
}

void* stream_of(const torch::Tensor& x) { return compat::cuda_current_stream(x.device().index()); }

void launched(const char* error, const char* op, const char* kernel) {
  if (error) fail(op, ": the CUDA kernel ", kernel, " failed to launch: ", error);
}

}  // namespace hamgan
