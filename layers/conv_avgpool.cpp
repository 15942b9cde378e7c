#include "layers/conv_avgpool.h"

#include "core/compat.h"
#include "core/error.h"

namespace hamgan {

torch::Tensor avgpool_folded_kernel(const torch::Tensor& w3) {
  if (w3.dim() != 4 || w3.size(2) != 3 || w3.size(3) != 3)
    fail("avgpool_folded_kernel: expected a [out, in, 3, 3] weight, got ", w3.sizes());
  compat::NoAutocast fp32;  // derive in the weight's precision; the convolution casts after
  // Row t of P gives input row 2i-1+t its weights from the two 3x3 windows (rows 2i, 2i+1).
  const torch::Tensor p = torch::tensor({1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0},
                                        w3.options().requires_grad(false))
                              .view({4, 3}) *
                          0.5;
  return torch::matmul(torch::matmul(p, w3), p.t());  // P W P^T per (out, in) pair
}

torch::Tensor conv3x3_avgpool2(const torch::Tensor& x, const torch::Tensor& w3, const torch::Tensor& bias) {
  return torch::conv2d(x, avgpool_folded_kernel(w3), bias, /*stride=*/2, /*padding=*/1);
}

}  // namespace hamgan
