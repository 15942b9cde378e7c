// The one spelling of a device choice: cpu | cuda | auto (cuda when LibTorch sees a GPU).
// train.device and every --device flag read it, with the same default, auto.
#pragma once
#include <torch/torch.h>

#include <string>

namespace hamgan {

// cuda without a GPU, or another name: an error naming `what` (the key or flag).
torch::Device resolve_device(const std::string& name, const std::string& what = "train.device");

}  // namespace hamgan
