// The NMF ham's one_step path on the CPU (Geng et al. 2021, Alg. 2; gradient of Eq. 13) as
// per-image kernels: each thread takes whole images, makes X_b = ReLU(x_b) in the compute dtype
// in a scratch buffer, and runs every matmul of that image single-threaded while X_b sits in
// cache. It replaces ~10 batched ops per step plus the full-size ReLU, cast and contiguous copy
// of x (and their backward passes) with one parallel region each way.
#pragma once
#include <torch/torch.h>

namespace hamgan {

// `steps` multiplicative updates without autograd, C first then D (NMF::step). x: N x d x n of
// any float dtype and strides, cast per image to bases' dtype (and ReLU'd when `relu`). coef
// undefined: start from softmax over r of inv_t * D^T X (NMF::init_coef). bases and coef are
// replaced by new contiguous tensors; the inputs are not modified.
void nmf_updates_cpu(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef,
                     int64_t steps, bool relu, double inv_t, double eps);

// Alg. 2's last C update, C * (D^T X) / (D^T D C + eps) with X = ReLU(x) cast to bases' dtype,
// differentiable in x alone: one_step holds D and C constant (Sec. 2.3). Hand-written backward,
// dL/dx = [x > 0] * D (A * G), A = C / (D^T D C + eps), returned in x's dtype and strides;
// under create_graph (a gradient penalty) as batched ops that autograd differentiates again.
torch::Tensor nmf_final_update_cpu(const torch::Tensor& x, const torch::Tensor& bases,
                                   const torch::Tensor& coef, double eps);

}  // namespace hamgan
