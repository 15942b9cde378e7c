#include "core/rng_scope.h"

#include <ATen/CPUGeneratorImpl.h>

namespace hamgan {

RngScope::RngScope(torch::Device device, uint64_t seed) : cpu_(at::detail::getDefaultCPUGenerator()) {
  cpu_state_ = cpu_.get_state();
  if (device.is_cuda()) {
    cuda_ = at::globalContext().defaultGenerator(device);
    cuda_state_ = cuda_->get_state();
    cuda_->set_current_seed(seed);
  }
  cpu_.set_current_seed(seed);
}

RngScope::~RngScope() {
  cpu_.set_state(cpu_state_);
  if (cuda_) cuda_->set_state(cuda_state_);
}

}  // namespace hamgan
