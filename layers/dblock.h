// BigGAN/SAGAN discriminator residual block:
//   h = pool(conv2(relu(conv1(relu(x)))));  out = h + conv_sc(pool(x))
// The first block of D is the "optimized" one (SNGAN): no pre-activation. Pooling is
// 2x2 average; the last D block does not pool. Where folded convolutions apply
// (layers/fold_taps.h), conv2 and the pooling run as one strided convolution, and so do the
// shortcut's pooling and conv_sc (layers/conv_avgpool.h), equal up to rounding.
#pragma once
#include <torch/torch.h>

#include "layers/spectral_norm.h"

namespace hamgan {

class DBlockImpl : public torch::nn::Module {
 public:
  DBlockImpl(int64_t in, int64_t out, bool preactivation, bool downsample, SNOptions sn);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  bool preactivation_, downsample_;
  SNConv2d conv1_{nullptr}, conv2_{nullptr}, conv_sc_{nullptr};
};
TORCH_MODULE(DBlock);

}  // namespace hamgan
