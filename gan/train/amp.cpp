#include "gan/train/amp.h"

#include "core/cpu_features.h"
#include "core/error.h"

namespace hamgan {

bool amp_enabled(const std::string& mode, const torch::Device& device) {
  if (mode == "true") return true;
  if (mode == "false") return false;
  if (mode == "auto") return device.is_cuda() || (device.is_cpu() && cpu_has_fast_bf16());
  fail("train.amp: expected auto, true or false, got '", mode, "'");
}

}  // namespace hamgan
