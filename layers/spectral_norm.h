// Spectral normalization (Miyato et al. 2018) with exactly the semantics of
// torch.nn.utils.spectral_norm: parameter `weight_orig`, buffers `weight_u`/`weight_v`,
// one power iteration per forward in training mode (no-grad, buffers updated in place),
// none in eval mode, and sigma = u^T W v differentiable through W only.
#pragma once
#include <torch/torch.h>

namespace hamgan {

// W / sigma(W) for weight_orig viewed as a (rows = size(0), cols = rest) matrix.
// The u/v used for sigma are clones of the buffers, so the same module can run twice
// (D on real, then fake) before one backward. Sigma is computed in fp32 outside autocast.
torch::Tensor spectral_normalized(const torch::Tensor& weight_orig, torch::Tensor& weight_u,
                                  torch::Tensor& weight_v, bool training, double eps,
                                  int64_t power_iterations);

// Registers weight_orig (given), weight_u and weight_v (random unit vectors) on `m`.
void register_spectral_norm(torch::nn::Module& m, const torch::Tensor& weight,
                            torch::Tensor& weight_orig, torch::Tensor& weight_u,
                            torch::Tensor& weight_v);

struct SNOptions {
  double eps = 1e-12;  // torch's default; BigGAN/HamGAN configs use 1e-6
  int64_t power_iterations = 1;
};

class SNConv2dImpl : public torch::nn::Module {
 public:
  SNConv2dImpl(int64_t in, int64_t out, int64_t kernel, int64_t padding, bool bias,
               SNOptions sn = {});
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor forward_relu(const torch::Tensor& x);  // relu(forward(x)), fused where it pays (conv2d_bias_relu)
  torch::Tensor weight();  // the normalized weight; runs the power iteration in training

  torch::Tensor weight_orig, bias, weight_u, weight_v;
  int64_t padding;
  SNOptions sn;
};
TORCH_MODULE(SNConv2d);

class SNLinearImpl : public torch::nn::Module {
 public:
  SNLinearImpl(int64_t in, int64_t out, bool bias, SNOptions sn = {});
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight();

  torch::Tensor weight_orig, bias, weight_u, weight_v;
  SNOptions sn;
};
TORCH_MODULE(SNLinear);

class SNEmbeddingImpl : public torch::nn::Module {
 public:
  SNEmbeddingImpl(int64_t num, int64_t dim, SNOptions sn = {});
  torch::Tensor forward(const torch::Tensor& labels);
  torch::Tensor weight();

  torch::Tensor weight_orig, weight_u, weight_v;
  SNOptions sn;
};
TORCH_MODULE(SNEmbedding);

}  // namespace hamgan
