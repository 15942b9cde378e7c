// Conditional batch norm and the ReLU after it as one operation (train.fused_cbn_relu):
//   y = max(0, (x - mean_c) * invstd_c * gain1[n, c] + bias[n, c]),   gain1 = 1 + gain(cond)
// (de Vries et al. 2017; BigGAN's G blocks, relu(cbn(x))). Written plainly, autocast's chain
// casts the bf16 activation to fp32, normalises, scales, shifts and rectifies it in five fp32
// passes and casts back for the convolution: about 48 bytes moved per element. Fused, the
// statistics take one read in fp32 accumulation and the output one read and one write in the
// activation's dtype (6 bytes); the backward is one reduction and one pass. It folds the affine
// into per-(sample, channel) coefficients, scale = invstd * gain1 and shift = bias - mean * scale,
// and differentiates BN through the batch statistics analytically (Ioffe & Szegedy 2015,
// Sec. 3), so no full-size intermediate is kept: only x and y, as the plain chain keeps.
// CUDA runs the kernels of layers/cbn_relu_cuda.cu; other devices the same arithmetic in ATen
// operations (the reference the CUDA kernels are tested against).
#pragma once
#include <torch/torch.h>

#include "layers/kernel_choice.h"

namespace hamgan {

// Where the fused form runs. It equals the plain chain up to rounding (one rounding to the
// activation's dtype instead of one per pass). auto: on CUDA (an H200's ImageNet-128 HamGAN
// step: 15% faster, 41% less peak memory; docs/gpu); on CPUs the ATen form moves no fewer
// bytes than the plain chain. train.fused_cbn_relu (layers/kernel_choice.h).
bool fused_cbn_relu_pays(const torch::Tensor& x);

// relu(bn(x) * gain1 + bias) for x (N x C x H x W, any float dtype and memory format) and gain1,
// bias (N x C). Training mode (or running statistics off): batch statistics, and bn's running
// averages updated as bn.forward does; eval mode: its running statistics. Differentiable in x,
// gain1 and bias (once: the backward is not itself differentiable; G's blocks need no more).
torch::Tensor cbn_relu(torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x, const torch::Tensor& gain1,
                       const torch::Tensor& bias);

}  // namespace hamgan
