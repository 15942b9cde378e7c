// Device names of train.device and --device (sample, fid): cpu | cuda | auto.
#pragma once
#include <torch/torch.h>

#include <string>

namespace hamgan {

// The device `name` selects; `what` names the key or flag in errors ("train.device").
// auto: the first GPU when LibTorch sees one, else the CPU. cuda without a usable GPU is an
// error that says why: a CPU-only LibTorch (and how to build the CUDA one), or no device.
torch::Device resolve_device(const std::string& name, const std::string& what = "train.device");

}  // namespace hamgan
