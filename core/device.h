// Device names of train.device and --device (sample, fid): cpu | cuda | auto.
#pragma once
#include <torch/torch.h>

#include <string>

namespace hamgan {

// The device `name` selects; `what` names the key or flag in errors ("train.device").
// auto: the first GPU when LibTorch sees one, else the CPU. cuda without a usable GPU is an
// error that says why: a CPU-only LibTorch (and how to build the CUDA one), or no device.
torch::Device resolve_device(const std::string& name, const std::string& what = "train.device");

// `host` (a CPU tensor) as a tensor of `options`' device and dtype, without waiting for the
// device. A blocking copy from pageable memory to a GPU first synchronises the stream (ATen waits
// for every queued kernel), so one such constant made inside a training step stalls the step's
// pipeline; through pinned memory the copy is queued behind the kernels like one of them.
torch::Tensor host_to_device(const torch::Tensor& host, const torch::TensorOptions& options);

}  // namespace hamgan
