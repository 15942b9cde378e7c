// BigGAN/SAGAN generator residual block:
//   h = conv2(relu(cbn2(conv1(up(relu(cbn1(x, c)))), c)));  out = h + conv_sc(up(x))
// with nearest x2 upsampling and 3x3 SN convs; the 1x1 SN shortcut conv exists when the
// channels change or the block upsamples (BigGAN's learnable_sc).
#pragma once
#include <torch/torch.h>

#include "layers/cond_bn.h"
#include "layers/spectral_norm.h"

namespace hamgan {

class GBlockImpl : public torch::nn::Module {
 public:
  GBlockImpl(int64_t in, int64_t out, bool upsample, CondSpec cond, double bn_eps,
             SNOptions sn);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond);

 private:
  bool upsample_;
  CondBatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  SNConv2d conv1_{nullptr}, conv2_{nullptr}, conv_sc_{nullptr};
};
TORCH_MODULE(GBlock);

}  // namespace hamgan
