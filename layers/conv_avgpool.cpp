#include "layers/conv_avgpool.h"

#include "layers/fold_taps.h"

namespace hamgan {

torch::Tensor avgpool_folded_kernel(const torch::Tensor& w3) {
  // Row t of the taps gives input row 2i-1+t its weights from the two 3x3 windows (rows 2i, 2i+1).
  return fold_3x3_taps(w3, {0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5}, "avgpool_folded_kernel");
}

torch::Tensor conv3x3_avgpool2(const torch::Tensor& x, const torch::Tensor& w3, const torch::Tensor& bias) {
  return torch::conv2d(x, avgpool_folded_kernel(w3), bias, /*stride=*/2, /*padding=*/1);
}

}  // namespace hamgan
