#include "core/device.h"

#include "core/compat.h"
#include "core/error.h"

namespace hamgan {

torch::Device resolve_device(const std::string& name, const std::string& what) {
  if (name == "cpu") return torch::kCPU;
  if (name != "cuda" && name != "auto") fail(what, ": expected cpu, cuda or auto, got '", name, "'");
  if (torch::cuda::is_available()) return torch::Device(torch::kCUDA, 0);
  if (name == "auto") return torch::kCPU;
  if (!compat::cuda_compiled())
    fail(what, ": cuda needs a CUDA build of LibTorch, but this binary uses ",
         compat::libtorch_description(), " (LIBTORCH=pip scripts/setup.sh builds one)");
  fail(what, ": cuda requested, but ", compat::libtorch_description(),
       " sees no CUDA device (no GPU or driver, or CUDA_VISIBLE_DEVICES hides them)");
}

torch::Tensor host_to_device(const torch::Tensor& host, const torch::TensorOptions& options) {
  if (!host.is_cpu()) fail("host_to_device: expected a CPU tensor, got one on ", host.device().str());
  const torch::Tensor h = host.to(options.dtype());
  if (!options.device().is_cuda()) return h.to(options);
  return h.pin_memory().to(options, /*non_blocking=*/true);
}

}  // namespace hamgan
