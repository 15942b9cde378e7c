#include "layers/upsample_conv.h"

#include "layers/fold_taps.h"

namespace hamgan {

torch::Tensor upsample_folded_kernels(const torch::Tensor& w3) {
  // Rows 2a, 2a+1 of the taps: the 3x3 taps that fall on input rows i-1+a and i+a for phase a.
  const torch::Tensor k = fold_3x3_taps(w3, {1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0},
                                        "upsample_folded_kernels");  // [out, in, 4 (2a+r), 4 (2b+s)]
  const int64_t out = w3.size(0), in = w3.size(1);
  return k.reshape({out, in, 2, 2, 2, 2}).permute({2, 4, 0, 1, 3, 5}).reshape({4 * out, in, 2, 2});
}

torch::Tensor upsample2_conv3x3(const torch::Tensor& x, const torch::Tensor& w3, const torch::Tensor& bias) {
  const int64_t n = x.size(0), out = w3.size(0), h = x.size(2), w = x.size(3);
  // All four phases in one convolution with padding 1: its position (i + a, j + b), channel
  // block 2a + b, reads input rows i-1+a, i+a and columns j-1+b, j+b, i.e. holds phase (a, b)'s
  // output (i, j).
  const torch::Tensor all = torch::conv2d(x, upsample_folded_kernels(w3),
                                          bias.defined() ? bias.repeat({4}) : bias, 1, 1);
  // [N, out, H, 2 (a), W, 2 (b)] as one strided view of it (any layout: the strides are read
  // off), so the interleave is a single copy forward and backward.
  const auto s = all.strides();
  const torch::Tensor y6 = all.as_strided({n, out, h, 2, w, 2},
                                          {s[0], s[1], s[2], s[2] + 2 * out * s[1], s[3], s[3] + out * s[1]},
                                          all.storage_offset());
  const bool cl = x.is_contiguous(torch::MemoryFormat::ChannelsLast) && !x.is_contiguous();
  if (cl) return y6.permute({0, 2, 3, 4, 5, 1}).contiguous().view({n, 2 * h, 2 * w, out}).permute({0, 3, 1, 2});
  return y6.contiguous().view({n, out, 2 * h, 2 * w});
}

}  // namespace hamgan
