// G's upsampled shortcut add, y = h + up2(s), and its gradient for s, the sum of each 2x2 block
// of g, as one pass each of 16-byte loads and stores (channels-last, the channels a multiple of
// the pack) or one element per thread (any other dense layout). ATen runs the add as a
// broadcast over a 6-d view and the gradient as a reduction over two strided dimensions of it:
// an H200 spent 5.1 ms of an ImageNet-128 step's device time in that reduction alone.
#include "layers/upsample_add_cuda.h"

#include "layers/cuda_elementwise.cuh"

namespace hamgan::cuda {
namespace {

template <typename T> struct alignas(16) Pack { T v[16 / sizeof(T)]; };

// Positions in h (N x C x hh x ww) and s (N x C x hh/2 x ww/2); i is an element of h (or of
// the 2x2 block's top-left corner), in either memory format.
template <typename Index> struct Geometry {
  Index c, hh, ww;
  bool cl;
  __device__ Index s_of(Index i) const {  // the element of s that h's element i reads
    if (cl) {
      const Index ch = i % c, pixel = i / c, x = pixel % ww, rest = pixel / ww, y = rest % hh, n = rest / hh;
      return ((n * (hh / 2) + y / 2) * (ww / 2) + x / 2) * c + ch;
    }
    const Index x = i % ww, rest = i / ww, y = rest % hh, nc = rest / hh;
    return (nc * (hh / 2) + y / 2) * (ww / 2) + x / 2;
  }
  __device__ Index h_of(Index k) const {  // the top-left element in h of s's element k's block
    if (cl) {
      const Index ch = k % c, pixel = k / c, x = pixel % (ww / 2), rest = pixel / (ww / 2), y = rest % (hh / 2),
                  n = rest / (hh / 2);
      return ((n * hh + 2 * y) * ww + 2 * x) * c + ch;
    }
    const Index x = k % (ww / 2), rest = k / (ww / 2), y = rest % (hh / 2), nc = rest / (hh / 2);
    return (nc * hh + 2 * y) * ww + 2 * x;
  }
  __device__ Index right() const { return cl ? c : 1; }  // from a pixel of h to the next column's
  __device__ Index down() const { return cl ? ww * c : ww; }
};

template <typename T, typename Index>
__global__ void add_vector_kernel(const Pack<T>* __restrict__ h, const Pack<T>* __restrict__ s,
                                  Pack<T>* __restrict__ y, Index packs, Geometry<Index> geo) {
  constexpr int V = 16 / sizeof(T);
  for (Index p = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; p < packs;
       p += static_cast<Index>(gridDim.x) * blockDim.x) {
    Pack<T> a = h[p];
    const Pack<T> b = s[geo.s_of(p * V) / V];  // channels-last: V channels of one pixel
#pragma unroll
    for (int j = 0; j < V; ++j) store(a.v, j, load(a.v, j) + load(b.v, j));
    y[p] = a;
  }
}

template <typename T, typename Index>
__global__ void add_scalar_kernel(const T* __restrict__ h, const T* __restrict__ s, T* __restrict__ y, Index total,
                                  Geometry<Index> geo) {
  for (Index i = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<Index>(gridDim.x) * blockDim.x)
    store(y, i, load(h, i) + load(s, geo.s_of(i)));
}

template <typename T, typename Index>
__global__ void sum2x2_vector_kernel(const Pack<T>* __restrict__ g, Pack<T>* __restrict__ ds, Index packs,
                                     Geometry<Index> geo) {
  constexpr int V = 16 / sizeof(T);
  using A = typename Acc<T>::type;
  for (Index q = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; q < packs;
       q += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index top = geo.h_of(q * V) / V, r = geo.right() / V, d = geo.down() / V;
    const Pack<T> g00 = g[top], g01 = g[top + r], g10 = g[top + d], g11 = g[top + d + r];
    Pack<T> out;
#pragma unroll
    for (int j = 0; j < V; ++j) {
      const A v = load(g00.v, j) + load(g01.v, j) + load(g10.v, j) + load(g11.v, j);
      store(out.v, j, v);
    }
    ds[q] = out;
  }
}

template <typename T, typename Index>
__global__ void sum2x2_scalar_kernel(const T* __restrict__ g, T* __restrict__ ds, Index total, Geometry<Index> geo) {
  using A = typename Acc<T>::type;
  for (Index k = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<Index>(gridDim.x) * blockDim.x) {
    const Index top = geo.h_of(k), r = geo.right(), d = geo.down();
    const A v = load(g, top) + load(g, top + r) + load(g, top + d) + load(g, top + d + r);
    store(ds, k, v);
  }
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T, typename Index>
void launch_forward(const void* h, const void* s, void* y, Index total, Geometry<Index> geo, cudaStream_t st) {
  constexpr Index V = 16 / sizeof(T);
  if (geo.cl && geo.c % V == 0 && aligned(h) && aligned(s) && aligned(y))
    add_vector_kernel<T, Index><<<elementwise_blocks(total / V), kThreads, 0, st>>>(
        static_cast<const Pack<T>*>(h), static_cast<const Pack<T>*>(s), static_cast<Pack<T>*>(y), total / V, geo);
  else
    add_scalar_kernel<T, Index><<<elementwise_blocks(total), kThreads, 0, st>>>(
        static_cast<const T*>(h), static_cast<const T*>(s), static_cast<T*>(y), total, geo);
}

template <typename T, typename Index>
void launch_backward(const void* g, void* ds, Index total_s, Geometry<Index> geo, cudaStream_t st) {
  constexpr Index V = 16 / sizeof(T);
  if (geo.cl && geo.c % V == 0 && aligned(g) && aligned(ds))
    sum2x2_vector_kernel<T, Index><<<elementwise_blocks(total_s / V), kThreads, 0, st>>>(
        static_cast<const Pack<T>*>(g), static_cast<Pack<T>*>(ds), total_s / V, geo);
  else
    sum2x2_scalar_kernel<T, Index><<<elementwise_blocks(total_s), kThreads, 0, st>>>(
        static_cast<const T*>(g), static_cast<T*>(ds), total_s, geo);
}

// 32-bit indices where h fits them (most activations), else 64-bit.
template <typename T>
const char* forward_typed(const void* h, const void* s, void* y, const ActShape& hs, int64_t hh, int64_t ww,
                          cudaStream_t st) {
  const int64_t total = hs.n * hs.c * hs.hw;
  if (total == 0) return nullptr;
  if (total < (int64_t{1} << 31))
    launch_forward<T, uint32_t>(h, s, y, static_cast<uint32_t>(total),
                                Geometry<uint32_t>{static_cast<uint32_t>(hs.c), static_cast<uint32_t>(hh),
                                                   static_cast<uint32_t>(ww), hs.channels_last},
                                st);
  else
    launch_forward<T, int64_t>(h, s, y, total, Geometry<int64_t>{hs.c, hh, ww, hs.channels_last}, st);
  return launched();
}

template <typename T>
const char* backward_typed(const void* g, void* ds, const ActShape& hs, int64_t hh, int64_t ww, cudaStream_t st) {
  const int64_t total = hs.n * hs.c * hs.hw;
  if (total == 0) return nullptr;
  if (total < (int64_t{1} << 31))
    launch_backward<T, uint32_t>(g, ds, static_cast<uint32_t>(total / 4),
                                 Geometry<uint32_t>{static_cast<uint32_t>(hs.c), static_cast<uint32_t>(hh),
                                                    static_cast<uint32_t>(ww), hs.channels_last},
                                 st);
  else
    launch_backward<T, int64_t>(g, ds, total / 4, Geometry<int64_t>{hs.c, hh, ww, hs.channels_last}, st);
  return launched();
}

}  // namespace

const char* upsample_add_forward(Dtype t, const void* h, const void* s, void* y, const ActShape& hs,
                                 int64_t height, int64_t width, void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  return with_dtype(t, "upsample_add_forward: unknown dtype",
                    [&](auto v) { return forward_typed<decltype(v)>(h, s, y, hs, height, width, st); });
}

const char* upsample_add_backward(Dtype t, const void* g, void* ds, const ActShape& hs, int64_t height,
                                  int64_t width, void* stream) {
  const auto st = static_cast<cudaStream_t>(stream);
  return with_dtype(t, "upsample_add_backward: unknown dtype",
                    [&](auto v) { return backward_typed<decltype(v)>(g, ds, hs, height, width, st); });
}

}  // namespace hamgan::cuda
