// The bias add of a convolution as one pass of 16-byte loads and stores. ATen adds a broadcast
// bias with its generic strided kernel, one 2-byte element per load under bf16: an H200 spent
// 13.2 ms of an ImageNet-128 step's device time in it, 5.1 ms in this kernel. D's ReLU after
// its first convolution rides in the same pass.
#include "layers/channel_bias_cuda.h"

#include "layers/cuda_elementwise.cuh"

namespace hamgan::cuda {
namespace {

template <typename T> struct alignas(16) Pack { T v[16 / sizeof(T)]; };

// The ReLU as torch::relu: negatives to 0, a NaN kept (NaN < 0 is false).
template <bool Relu, typename A> __device__ inline A activate(A v) { return Relu && v < A(0) ? A(0) : v; }

// Each thread adds V = 16 / sizeof(T) consecutive elements. The host picks this form only
// where all V share one channel (N C H W, hw % V == 0) or hold V consecutive channels
// (N H W C, c % V == 0), and x, y are 16-byte aligned.
template <typename T, bool Relu, typename Index>
__global__ void bias_vector_kernel(const Pack<T>* __restrict__ x, const typename Acc<T>::type* __restrict__ bias,
                                   Pack<T>* __restrict__ y, Index packs, Index c, Index hw, bool cl) {
  constexpr int V = 16 / sizeof(T);
  for (Index p = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; p < packs;
       p += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index i = p * V;
    const Index ch = cl ? i % c : (i / hw) % c;
    Pack<T> v = x[p];
#pragma unroll
    for (int j = 0; j < V; ++j) store(v.v, j, activate<Relu>(load(v.v, j) + bias[cl ? ch + j : ch]));
    y[p] = v;
  }
}

template <typename T, bool Relu, typename Index>
__global__ void bias_scalar_kernel(const T* __restrict__ x, const typename Acc<T>::type* __restrict__ bias,
                                   T* __restrict__ y, Index total, Index c, Index hw, bool cl) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<Index>(gridDim.x) * blockDim.x)
    store(y, i, activate<Relu>(load(x, i) + bias[cl ? i % c : (i / hw) % c]));
}

template <typename T, bool Relu, typename Index>
void launch(const void* x, const void* bias, void* y, Index total, Index c, Index hw, bool cl, cudaStream_t st) {
  using A = typename Acc<T>::type;
  constexpr Index V = 16 / sizeof(T);
  const bool aligned = reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(y) % 16 == 0;
  const auto* b = static_cast<const A*>(bias);
  if (aligned && (cl ? c % V == 0 : hw % V == 0))
    bias_vector_kernel<T, Relu, Index><<<elementwise_blocks(total / V), kThreads, 0, st>>>(
        static_cast<const Pack<T>*>(x), b, static_cast<Pack<T>*>(y), total / V, c, hw, cl);
  else
    bias_scalar_kernel<T, Relu, Index><<<elementwise_blocks(total), kThreads, 0, st>>>(
        static_cast<const T*>(x), b, static_cast<T*>(y), total, c, hw, cl);
}

template <typename T, bool Relu>
const char* launch_sized(const void* x, const void* bias, void* y, const ActShape& s, cudaStream_t st) {
  const int64_t total = s.n * s.c * s.hw;
  if (total == 0) return nullptr;
  if (total < (int64_t{1} << 31))
    launch<T, Relu, uint32_t>(x, bias, y, static_cast<uint32_t>(total), static_cast<uint32_t>(s.c),
                              static_cast<uint32_t>(s.hw), s.channels_last, st);
  else
    launch<T, Relu, int64_t>(x, bias, y, total, s.c, s.hw, s.channels_last, st);
  return launched();
}

template <typename T>
const char* forward_typed(const void* x, const void* bias, void* y, const ActShape& s, bool relu, cudaStream_t st) {
  return relu ? launch_sized<T, true>(x, bias, y, s, st) : launch_sized<T, false>(x, bias, y, s, st);
}

}  // namespace

const char* channel_bias_forward(Dtype t, const void* x, const void* bias, void* y, const ActShape& s,
                                 bool relu, void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  return with_dtype(t, "channel_bias_forward: unknown dtype",
                    [&](auto v) { return forward_typed<decltype(v)>(x, bias, y, s, relu, st); });
}

}  // namespace hamgan::cuda
