#include "layers/spectral_norm.h"

#include <cmath>

#include "core/compat.h"
#include "layers/channel_bias.h"

namespace hamgan {

namespace F = torch::nn::functional;

torch::Tensor spectral_normalized(const torch::Tensor& weight_orig, torch::Tensor& weight_u,
                                  torch::Tensor& weight_v, bool training, double eps,
                                  int64_t power_iterations) {
  compat::NoAutocast fp32_sigma;
  const torch::Tensor w = weight_orig.reshape({weight_orig.size(0), -1});
  torch::Tensor u = weight_u, v = weight_v;
  if (training && power_iterations > 0) {
    torch::NoGradGuard no_grad;
    for (int64_t i = 0; i < power_iterations; ++i) {
      weight_v.copy_(F::normalize(torch::mv(w.t(), weight_u),
                                  F::NormalizeFuncOptions().dim(0).eps(eps)));
      weight_u.copy_(F::normalize(torch::mv(w, weight_v),
                                  F::NormalizeFuncOptions().dim(0).eps(eps)));
    }
    // Clones keep the autograd-saved u, v intact when the buffers move on next forward.
    u = weight_u.clone();
    v = weight_v.clone();
  }
  const torch::Tensor sigma = torch::dot(u, torch::mv(w, v));
  return weight_orig / sigma;
}

void register_spectral_norm(torch::nn::Module& m, const torch::Tensor& weight,
                            torch::Tensor& weight_orig, torch::Tensor& weight_u,
                            torch::Tensor& weight_v) {
  const int64_t rows = weight.size(0), cols = weight.numel() / rows;
  weight_orig = m.register_parameter("weight_orig", weight);
  torch::NoGradGuard no_grad;
  weight_u = m.register_buffer(
      "weight_u", F::normalize(torch::randn({rows}), F::NormalizeFuncOptions().dim(0)));
  weight_v = m.register_buffer(
      "weight_v", F::normalize(torch::randn({cols}), F::NormalizeFuncOptions().dim(0)));
}

namespace {
// PyTorch's default init for conv/linear (kaiming_uniform with a = sqrt(5)), so a module
// is usable on its own; models re-initialise weights by their configured scheme.
torch::Tensor default_weight(std::vector<int64_t> shape) {
  torch::Tensor w = torch::empty(shape);
  torch::nn::init::kaiming_uniform_(w, std::sqrt(5.0));
  return w;
}
torch::Tensor default_bias(int64_t n, int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return torch::empty({n}).uniform_(-bound, bound);
}
}  // namespace

SNConv2dImpl::SNConv2dImpl(int64_t in, int64_t out, int64_t kernel, int64_t padding_,
                           bool with_bias, SNOptions sn_)
    : padding(padding_), sn(sn_) {
  if (with_bias) bias = register_parameter("bias", default_bias(out, in * kernel * kernel));
  register_spectral_norm(*this, default_weight({out, in, kernel, kernel}), weight_orig,
                         weight_u, weight_v);
}

torch::Tensor SNConv2dImpl::weight() {
  return spectral_normalized(weight_orig, weight_u, weight_v, is_training(), sn.eps,
                             sn.power_iterations);
}

torch::Tensor SNConv2dImpl::forward(const torch::Tensor& x) {
  return conv2d_bias(x, weight(), bias, /*stride=*/1, padding);
}

torch::Tensor SNConv2dImpl::forward_relu(const torch::Tensor& x) {
  return conv2d_bias_relu(x, weight(), bias, /*stride=*/1, padding);
}

SNLinearImpl::SNLinearImpl(int64_t in, int64_t out, bool with_bias, SNOptions sn_) : sn(sn_) {
  if (with_bias) bias = register_parameter("bias", default_bias(out, in));
  register_spectral_norm(*this, default_weight({out, in}), weight_orig, weight_u, weight_v);
}

torch::Tensor SNLinearImpl::weight() {
  return spectral_normalized(weight_orig, weight_u, weight_v, is_training(), sn.eps,
                             sn.power_iterations);
}

torch::Tensor SNLinearImpl::forward(const torch::Tensor& x) {
  return F::linear(x, weight(), bias);
}

SNEmbeddingImpl::SNEmbeddingImpl(int64_t num, int64_t dim, SNOptions sn_) : sn(sn_) {
  register_spectral_norm(*this, torch::randn({num, dim}), weight_orig, weight_u, weight_v);
}

torch::Tensor SNEmbeddingImpl::weight() {
  return spectral_normalized(weight_orig, weight_u, weight_v, is_training(), sn.eps,
                             sn.power_iterations);
}

torch::Tensor SNEmbeddingImpl::forward(const torch::Tensor& labels) {
  return F::embedding(labels, weight());
}

}  // namespace hamgan
