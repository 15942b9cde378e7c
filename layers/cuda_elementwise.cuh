// Device-side pieces shared by hamgan's elementwise CUDA kernels (layers/*_cuda.cu): the
// accumulation type, loads and stores that round once, the grid size and the launch check.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "layers/cuda_types.h"

namespace hamgan::cuda {

// Arithmetic in float for fp32, bf16 and fp16 activations; double for double.
template <typename T> struct Acc { using type = float; };
template <> struct Acc<double> { using type = double; };

__device__ inline float load(const float* p, int64_t i) { return p[i]; }
__device__ inline double load(const double* p, int64_t i) { return p[i]; }
__device__ inline float load(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ inline float load(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ inline void store(float* p, int64_t i, float v) { p[i] = v; }
__device__ inline void store(double* p, int64_t i, double v) { p[i] = v; }
__device__ inline void store(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16(v); }
__device__ inline void store(__half* p, int64_t i, float v) { p[i] = __float2half(v); }

constexpr int kThreads = 256;

// Enough blocks to fill the GPU several times over; the kernels' loops stride over the rest.
inline unsigned elementwise_blocks(int64_t total) {
  const int64_t blocks = (total + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

// f(T{}) for the activation type T that `t` names: the kernels' one dispatch on the dtype.
// Returns f's result (nullptr, or a launch's error text), or `unknown` for a dtype of none.
template <typename F>
const char* with_dtype(Dtype t, const char* unknown, F&& f) {
  switch (t) {
    case Dtype::f32: return f(float{});
    case Dtype::f64: return f(double{});
    case Dtype::bf16: return f(__nv_bfloat16{});
    case Dtype::f16: return f(__half{});
  }
  return unknown;
}

inline const char* launched() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace hamgan::cuda
