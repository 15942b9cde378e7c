#include "gan/train/ema.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace hamgan {

Ema::Ema(torch::nn::Module& source, torch::nn::Module& target, double decay, int64_t start,
         double rampup)
    : decay_(decay), start_(start), rampup_(rampup) {
  const auto sp = source.named_parameters(), tp = target.named_parameters();
  const auto sb = source.named_buffers(), tb = target.named_buffers();
  if (sp.size() != tp.size() || sb.size() != tb.size())
    fail("EMA: target module does not have the source's parameters and buffers");
  for (const auto& kv : sp) {
    const torch::Tensor* t = tp.find(kv.key());
    if (!t || !t->sizes().equals(kv.value().sizes()))
      fail("EMA: target lacks parameter '", kv.key(), "' of shape ", kv.value().sizes());
    src_params_.push_back(kv.value());
    dst_params_.push_back(*t);
  }
  for (const auto& kv : sb) {
    const torch::Tensor* t = tb.find(kv.key());
    if (!t || !t->sizes().equals(kv.value().sizes()))
      fail("EMA: target lacks buffer '", kv.key(), "' of shape ", kv.value().sizes());
    src_buffers_.push_back(kv.value());
    dst_buffers_.push_back(*t);
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < src_params_.size(); ++i) dst_params_[i].copy_(src_params_[i]);
  for (size_t i = 0; i < src_buffers_.size(); ++i) dst_buffers_[i].copy_(src_buffers_[i]);
}

double Ema::decay_at(int64_t iteration) const {
  if (iteration < start_) return 0.0;
  if (rampup_ <= 0) return decay_;
  const double updates = static_cast<double>(iteration - start_ + 1);
  return std::min(decay_, std::pow(0.5, 1.0 / (rampup_ * updates)));
}

void Ema::update(int64_t iteration) {
  torch::NoGradGuard no_grad;
  const double d = decay_at(iteration);
  if (d == 0.0) {
    for (size_t i = 0; i < src_params_.size(); ++i) dst_params_[i].copy_(src_params_[i]);
  } else {
    // lerp_(w, 1 - d): w_ema + (1 - d)(w - w_ema) = d w_ema + (1 - d) w.
    for (size_t i = 0; i < src_params_.size(); ++i)
      dst_params_[i].lerp_(src_params_[i], 1.0 - d);
  }
  for (size_t i = 0; i < src_buffers_.size(); ++i) dst_buffers_[i].copy_(src_buffers_[i]);
}

}  // namespace hamgan
