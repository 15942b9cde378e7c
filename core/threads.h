// Intra-op threads: ATen's pool gets n, the BLAS library's own pool 1.
// ATen already splits work across its pool (convolutions, element-wise ops, the per-image
// Hamburger kernels), and calls BLAS from inside it; OpenBLAS's pthread pool (Debian's
// libopenblas0-pthread, 2 threads by default) on top of it oversubscribes the cores and
// spin-waits. Measured, bench train SAGAN-32 ham_nmf with two other processes busy: median
// 6447 ms/it with OpenBLAS's default vs 2002 ms/it with 1.
#pragma once

namespace hamgan {

void set_threads(int n);

// The BLAS library's pool at `n` threads while it lives, its earlier count after: for matrix
// products that are large and called from one thread, outside ATen's parallel regions (a
// ViT's linear layers: DINOv2's features at 1 thread ran at 5.1 images/s, at 2 at 6.7, on a
// 2-core EPYC). Nothing where BLAS is MKL (ATen's own count rules it).
class BlasThreadsScope {
 public:
  explicit BlasThreadsScope(int n);
  ~BlasThreadsScope();
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;

 private:
  int previous_ = 0;  // 0: no OpenBLAS
};

}  // namespace hamgan
