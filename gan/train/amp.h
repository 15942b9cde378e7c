// train.amp: bf16 autocast of the training forward passes. "auto" turns it on where bf16 is
// faster than fp32: CUDA GPUs of compute capability >= 8, and CPUs with native bf16 (AVX-512
// BF16 / AMX), where oneDNN's bf16 convolutions run ~2x faster than fp32. "true" forces it on any device, "false" keeps fp32.
// Under autocast, spectral-norm sigma, BN, the losses and the Hamburger's decomposition stay fp32.
#pragma once
#include <torch/torch.h>

#include "gan/config/config.h"  // AmpMode

namespace hamgan {

// Whether `mode` means bf16 autocast on `device` (auto: amp_auto with the GPU's capability).
bool amp_enabled(AmpMode mode, const torch::Device& device);
// What `auto` decides: on a CUDA GPU of compute capability >= 8 (Ampere: bf16 tensor cores;
// older GPUs emulate bf16, slower than fp32), on a CPU with native bf16; else off.
bool amp_auto(const torch::Device& device, int cuda_capability_major);

// train.tf32: whether CUDA's fp32 matrix products run in TF32 (10 mantissa bits) on the tensor
// cores. Under bf16 autocast the only fp32 products left are the Hamburger's decomposition's,
// and TF32 keeps 3 bits more than the bf16 around them: auto turns it on with autocast on CUDA.
bool tf32_enabled(Tf32Mode mode, const torch::Device& device, bool amp);

}  // namespace hamgan
