#include "gan/train/amp.h"

#include "core/compat.h"
#include "core/cpu_features.h"
#include "core/error.h"

namespace hamgan {

bool amp_enabled(AmpMode mode, const torch::Device& device) {
  switch (mode) {
    case AmpMode::On: return true;
    case AmpMode::Off: return false;
    case AmpMode::Auto: break;
  }
  const c10::DeviceIndex gpu = device.index() < 0 ? 0 : device.index();
  return amp_auto(device, device.is_cuda() ? compat::cuda_capability_major(gpu) : -1);
}

bool amp_auto(const torch::Device& device, int cuda_capability_major) {
  if (device.is_cuda()) return cuda_capability_major >= 8;
  return device.is_cpu() && cpu_has_fast_bf16();
}

bool tf32_enabled(Tf32Mode mode, const torch::Device& device, bool amp) {
  switch (mode) {
    case Tf32Mode::On: return device.is_cuda();
    case Tf32Mode::Off: return false;
    case Tf32Mode::Auto: break;
  }
  return device.is_cuda() && amp;
}

}  // namespace hamgan
