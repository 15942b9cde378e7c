#include "layers/dblock.h"

#include "layers/conv_avgpool.h"
#include "layers/fold_taps.h"

namespace hamgan {

namespace {
torch::Tensor pool2(const torch::Tensor& x) { return torch::avg_pool2d(x, {2, 2}); }
}  // namespace

DBlockImpl::DBlockImpl(int64_t in, int64_t out, bool preactivation, bool downsample,
                       SNOptions sn)
    : preactivation_(preactivation), downsample_(downsample) {
  conv1_ = register_module("conv1", SNConv2d(in, out, 3, 1, true, sn));
  conv2_ = register_module("conv2", SNConv2d(out, out, 3, 1, true, sn));
  if (in != out || downsample) conv_sc_ = register_module("conv_sc", SNConv2d(in, out, 1, 0, true, sn));
}

torch::Tensor DBlockImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = preactivation_ ? torch::relu(x) : x;
  h = conv1_->forward_relu(h);  // the ReLU in the bias add's pass where that pays (layers/channel_bias.h)
  // conv2 then pooling as one 4x4 stride-2 convolution (layers/conv_avgpool.h), 2.25x fewer
  // MACs: a training step 18% faster in fp32 (quickstart model, AVX2). Where it pays under bf16
  // (not on AMX, whose 3x3 kernels beat the 4x4 strided ones): layers/fold_taps.h.
  const bool fold = downsample_ && folded_conv_pays(h);
  if (fold)
    h = conv3x3_avgpool2(h, conv2_->weight(), conv2_->bias);
  else if (downsample_)
    h = pool2(conv2_->forward(h));
  else
    h = conv2_->forward(h);
  // Shortcut: BigGAN convolves then pools in pre-activation blocks; a 1x1 conv and a 2x2
  // average pool are both linear and commute exactly, so pooling first costs 4x fewer MACs.
  // Folded, pool and 1x1 conv run as one 2x2 stride-2 convolution (layers/conv_avgpool.h):
  // no avg_pool2d left in the block, for 4x the shortcut's MACs.
  if (fold && conv_sc_ && folded_shortcut_pays(x))
    return h + avgpool2_conv1x1(x, conv_sc_->weight(), conv_sc_->bias);
  torch::Tensor s = downsample_ ? pool2(x) : x;
  if (conv_sc_) s = conv_sc_->forward(s);
  return h + s;
}

}  // namespace hamgan
