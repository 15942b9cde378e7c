// Kernels of the fused conditional BN + ReLU (layers/cbn_relu.h): one read of each input and
// one write of each output per pass, arithmetic in the accumulation type (float for fp32, bf16
// and fp16 activations; double for double), rounded once on the store.
#include "layers/cbn_relu_cuda.h"

#include "layers/cuda_elementwise.cuh"

namespace hamgan::cuda {
namespace {

// Calls f(i, channel, sample * C + channel) for every element i in memory order, striding over
// the grid. Index is 32-bit where the tensor allows (its divisions are several times cheaper).
template <typename Index, typename F>
__device__ inline void each_element(Index total, Index c, Index hw, bool cl, F f) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index ch = cl ? i % c : (i / hw) % c;
    f(i, ch, i / (c * hw) * c + ch);
  }
}

template <typename T, typename Index>
__global__ void forward_kernel(const T* __restrict__ x, const typename Acc<T>::type* __restrict__ scale,
                               const typename Acc<T>::type* __restrict__ shift, T* __restrict__ y, Index total,
                               Index c, Index hw, bool cl) {
  using A = typename Acc<T>::type;
  each_element(total, c, hw, cl, [&](Index i, Index, Index k) {
    const A v = load(x, i) * scale[k] + shift[k];
    store(y, i, v > A(0) ? v : A(0));
  });
}

template <typename T, typename Index>
__global__ void backward_kernel(const T* __restrict__ g, const T* __restrict__ y, const T* __restrict__ x,
                                const typename Acc<T>::type* __restrict__ k1,
                                const typename Acc<T>::type* __restrict__ k2,
                                const typename Acc<T>::type* __restrict__ k3, T* __restrict__ dx, Index total,
                                Index c, Index hw, bool cl) {
  using A = typename Acc<T>::type;
  each_element(total, c, hw, cl, [&](Index i, Index ch, Index k) {
    const A gm = load(y, i) > A(0) ? load(g, i) : A(0);
    store(dx, i, gm * k1[k] + load(x, i) * k2[ch] + k3[ch]);
  });
}

// Channels-last: a block holds 32 channels of one sample (a warp reads 32 neighbours) and its 8
// rows of threads walk the pixels; the rows' partial sums meet in shared memory.
constexpr int kCols = 32, kRows = 8;
template <typename T>
__global__ void reduce_cl_kernel(const T* __restrict__ g, const T* __restrict__ y, const T* __restrict__ x,
                                 typename Acc<T>::type* __restrict__ s0, typename Acc<T>::type* __restrict__ s1,
                                 int64_t c, int64_t hw) {
  using A = typename Acc<T>::type;
  __shared__ A p0[kRows][kCols], p1[kRows][kCols];
  const int64_t ch = blockIdx.x * static_cast<int64_t>(kCols) + threadIdx.x, n = blockIdx.y;
  A a0 = 0, a1 = 0;
  if (ch < c) {
    for (int64_t p = threadIdx.y; p < hw; p += kRows) {
      const int64_t i = (n * hw + p) * c + ch;
      const A gm = load(y, i) > A(0) ? load(g, i) : A(0);
      a0 += gm;
      a1 += gm * load(x, i);
    }
  }
  p0[threadIdx.y][threadIdx.x] = a0;
  p1[threadIdx.y][threadIdx.x] = a1;
  __syncthreads();
  if (threadIdx.y == 0 && ch < c) {
    for (int r = 1; r < kRows; ++r) {
      a0 += p0[r][threadIdx.x];
      a1 += p1[r][threadIdx.x];
    }
    s0[n * c + ch] = a0;
    s1[n * c + ch] = a1;
  }
}

// N C H W: a block per (sample, channel) over its contiguous pixels, a tree in shared memory.
template <typename T>
__global__ void reduce_nchw_kernel(const T* __restrict__ g, const T* __restrict__ y, const T* __restrict__ x,
                                   typename Acc<T>::type* __restrict__ s0, typename Acc<T>::type* __restrict__ s1,
                                   int64_t hw) {
  using A = typename Acc<T>::type;
  __shared__ A p0[kThreads], p1[kThreads];
  const int64_t k = blockIdx.x, base = k * hw;
  A a0 = 0, a1 = 0;
  for (int64_t p = threadIdx.x; p < hw; p += kThreads) {
    const A gm = load(y, base + p) > A(0) ? load(g, base + p) : A(0);
    a0 += gm;
    a1 += gm * load(x, base + p);
  }
  p0[threadIdx.x] = a0;
  p1[threadIdx.x] = a1;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      p0[threadIdx.x] += p0[threadIdx.x + s];
      p1[threadIdx.x] += p1[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    s0[k] = p0[0];
    s1[k] = p1[0];
  }
}

template <typename T>
const char* forward_typed(const void* x, const void* scale, const void* shift, void* y, const ActShape& s,
                          cudaStream_t st) {
  using A = typename Acc<T>::type;
  const int64_t total = s.n * s.c * s.hw;
  if (total == 0) return nullptr;
  const auto* xt = static_cast<const T*>(x);
  const auto *sc = static_cast<const A*>(scale), *sh = static_cast<const A*>(shift);
  if (total < (int64_t{1} << 31))
    forward_kernel<T, uint32_t><<<elementwise_blocks(total), kThreads, 0, st>>>(
        xt, sc, sh, static_cast<T*>(y), static_cast<uint32_t>(total), static_cast<uint32_t>(s.c),
        static_cast<uint32_t>(s.hw), s.channels_last);
  else
    forward_kernel<T, int64_t><<<elementwise_blocks(total), kThreads, 0, st>>>(xt, sc, sh, static_cast<T*>(y), total,
                                                                               s.c, s.hw, s.channels_last);
  return launched();
}

template <typename T>
const char* reduce_typed(const void* g, const void* y, const void* x, void* s0, void* s1, const ActShape& s,
                         cudaStream_t st) {
  using A = typename Acc<T>::type;
  if (s.n * s.c == 0) return nullptr;
  const auto *gt = static_cast<const T*>(g), *yt = static_cast<const T*>(y), *xt = static_cast<const T*>(x);
  if (s.channels_last) {
    const dim3 grid(static_cast<unsigned>((s.c + kCols - 1) / kCols), static_cast<unsigned>(s.n));
    reduce_cl_kernel<T><<<grid, dim3(kCols, kRows), 0, st>>>(gt, yt, xt, static_cast<A*>(s0), static_cast<A*>(s1),
                                                             s.c, s.hw);
  } else {
    reduce_nchw_kernel<T><<<static_cast<unsigned>(s.n * s.c), kThreads, 0, st>>>(
        gt, yt, xt, static_cast<A*>(s0), static_cast<A*>(s1), s.hw);
  }
  return launched();
}

template <typename T>
const char* backward_typed(const void* g, const void* y, const void* x, const void* k1, const void* k2,
                           const void* k3, void* dx, const ActShape& s, cudaStream_t st) {
  using A = typename Acc<T>::type;
  const int64_t total = s.n * s.c * s.hw;
  if (total == 0) return nullptr;
  const auto *gt = static_cast<const T*>(g), *yt = static_cast<const T*>(y), *xt = static_cast<const T*>(x);
  const auto *a = static_cast<const A*>(k1), *b = static_cast<const A*>(k2), *d = static_cast<const A*>(k3);
  if (total < (int64_t{1} << 31))
    backward_kernel<T, uint32_t><<<elementwise_blocks(total), kThreads, 0, st>>>(
        gt, yt, xt, a, b, d, static_cast<T*>(dx), static_cast<uint32_t>(total), static_cast<uint32_t>(s.c),
        static_cast<uint32_t>(s.hw), s.channels_last);
  else
    backward_kernel<T, int64_t><<<elementwise_blocks(total), kThreads, 0, st>>>(
        gt, yt, xt, a, b, d, static_cast<T*>(dx), total, s.c, s.hw, s.channels_last);
  return launched();
}

}  // namespace

const char* cbn_relu_forward(Dtype t, const void* x, const void* scale, const void* shift, void* y,
                             const ActShape& s, void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  return with_dtype(t, "cbn_relu_forward: unknown dtype",
                    [&](auto v) { return forward_typed<decltype(v)>(x, scale, shift, y, s, st); });
}

const char* cbn_relu_reduce(Dtype t, const void* g, const void* y, const void* x, void* s0, void* s1,
                            const ActShape& s, void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  return with_dtype(t, "cbn_relu_reduce: unknown dtype",
                    [&](auto v) { return reduce_typed<decltype(v)>(g, y, x, s0, s1, s, st); });
}

const char* cbn_relu_backward(Dtype t, const void* g, const void* y, const void* x, const void* k1,
                              const void* k2, const void* k3, void* dx, const ActShape& s, void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  return with_dtype(t, "cbn_relu_backward: unknown dtype",
                    [&](auto v) { return backward_typed<decltype(v)>(g, y, x, k1, k2, k3, dx, s, st); });
}

}  // namespace hamgan::cuda
