#include "core/device.h"

#include "core/error.h"

namespace hamgan {

torch::Device resolve_device(const std::string& name, const std::string& what) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda" || name == "auto") {
    if (torch::cuda::is_available()) return torch::Device(torch::kCUDA, 0);
    if (name == "cuda") fail(what, ": cuda requested, but LibTorch sees no CUDA device");
    return torch::kCPU;
  }
  fail(what, ": expected cpu, cuda or auto, got '", name, "'");
}

}  // namespace hamgan
