// Intra-op threads: ATen's pool gets n, the BLAS library's own pool 1.
// ATen already splits work across its pool (convolutions, element-wise ops, the per-image
// Hamburger kernels), and calls BLAS from inside it; OpenBLAS's pthread pool (Debian's
// libopenblas0-pthread, 2 threads by default) on top of it oversubscribes the cores and
// spin-waits. Measured, bench train SAGAN-32 ham_nmf with two other processes busy: median
// 6447 ms/it with OpenBLAS's default vs 2002 ms/it with 1.
#pragma once

namespace hamgan {

void set_threads(int n);

}  // namespace hamgan
