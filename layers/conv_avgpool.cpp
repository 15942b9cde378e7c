#include "layers/conv_avgpool.h"

#include "core/compat.h"
#include "core/error.h"
#include "layers/channel_bias.h"
#include "layers/fold_taps.h"

namespace hamgan {

torch::Tensor avgpool_folded_kernel(const torch::Tensor& w3) {
  // Row t of the taps gives input row 2i-1+t its weights from the two 3x3 windows (rows 2i, 2i+1).
  return fold_3x3_taps(w3, {0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.5}, "avgpool_folded_kernel");
}

torch::Tensor conv3x3_avgpool2(const torch::Tensor& x, const torch::Tensor& w3, const torch::Tensor& bias) {
  return conv2d_bias(x, avgpool_folded_kernel(w3), bias, /*stride=*/2, /*padding=*/1);
}

torch::Tensor avgpool2_conv1x1(const torch::Tensor& x, const torch::Tensor& w1, const torch::Tensor& bias) {
  if (w1.dim() != 4 || w1.size(2) != 1 || w1.size(3) != 1)
    fail("avgpool2_conv1x1: expected a [out, in, 1, 1] weight, got ", w1.sizes());
  torch::Tensor w2;
  {
    compat::NoAutocast fp32;  // derive in the weight's precision (a quarter is exact); the convolution casts after
    w2 = w1.expand({-1, -1, 2, 2}) * 0.25;
  }
  return conv2d_bias(x, w2, bias, /*stride=*/2, /*padding=*/0);
}

}  // namespace hamgan
