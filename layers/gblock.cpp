#include "layers/gblock.h"

namespace hamgan {

namespace F = torch::nn::functional;

namespace {
torch::Tensor upsample2(const torch::Tensor& x) {
  return F::interpolate(x, F::InterpolateFuncOptions()
                               .scale_factor(std::vector<double>{2.0, 2.0})
                               .mode(torch::kNearest));
}
}  // namespace

GBlockImpl::GBlockImpl(int64_t in, int64_t out, bool upsample, CondSpec cond, double bn_eps,
                       SNOptions sn)
    : upsample_(upsample) {
  bn1_ = register_module("bn1", CondBatchNorm2d(in, cond, bn_eps, sn));
  conv1_ = register_module("conv1", SNConv2d(in, out, 3, 1, true, sn));
  bn2_ = register_module("bn2", CondBatchNorm2d(out, cond, bn_eps, sn));
  conv2_ = register_module("conv2", SNConv2d(out, out, 3, 1, true, sn));
  if (in != out || upsample) conv_sc_ = register_module("conv_sc", SNConv2d(in, out, 1, 0, true, sn));
}

torch::Tensor GBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  torch::Tensor h = torch::relu(bn1_->forward(x, cond));
  torch::Tensor s = x;
  if (upsample_) {
    h = upsample2(h);
    s = upsample2(s);
  }
  h = conv1_->forward(h);
  h = conv2_->forward(torch::relu(bn2_->forward(h, cond)));
  if (conv_sc_) s = conv_sc_->forward(s);
  return h + s;
}

}  // namespace hamgan
