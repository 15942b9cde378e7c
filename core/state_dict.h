// Named tensors in and out of modules. Loading is strict: missing, unexpected or
// mis-shaped keys are one error listing all of them.
#pragma once
#include <torch/torch.h>

#include <map>
#include <string>

namespace hamgan {

using TensorMap = std::map<std::string, torch::Tensor>;

TensorMap state_dict(const torch::nn::Module& m);  // parameters and buffers, by name
// `what` names the source in errors (a file, "checkpoint G"). Copies values in place,
// casting to each destination's dtype and device.
void load_state_dict(torch::nn::Module& m, const TensorMap& values, const std::string& what);

}  // namespace hamgan
