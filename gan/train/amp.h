// train.amp: bf16 autocast of the training forward passes. "auto" turns it on where bf16 is
// faster than fp32: CUDA, and CPUs with native bf16 (AVX-512 BF16 / AMX), where oneDNN's bf16
// convolutions run ~2x faster than fp32. "true" forces it on any device, "false" keeps fp32.
// Under autocast, spectral-norm sigma, BN, the losses and the Hamburger's decomposition stay fp32.
#pragma once
#include <torch/torch.h>

#include <string>

namespace hamgan {

// Whether `mode` (auto, true, false) means bf16 autocast on `device`.
bool amp_enabled(const std::string& mode, const torch::Device& device);

}  // namespace hamgan
