// Where one of hamgan's fused CUDA kernels runs in place of the ATen form it equals up to
// rounding (train.fused_cbn_relu, train.bias_kernel, train.upsample_add_kernel): one switch per
// kernel, process-wide, as train.folded_convs.
#pragma once
#include <torch/torch.h>

#include <atomic>

#include "layers/cuda_tensor.h"

namespace hamgan {

enum class FusePolicy {
  WherePays,  // auto: on CUDA, where this build has the kernels (measured faster there, docs/gpu)
  Always,     // true: on every device (other devices run the fused form's ATen arithmetic, to test it)
  Never,      // false: the operations as written
};

class FuseSwitch {
 public:
  void set(FusePolicy policy) { policy_ = policy; }
  // Whether the fused form runs for input x.
  bool pays(const torch::Tensor& x) const {
    const FusePolicy p = policy_;
    return p == FusePolicy::Always || (p == FusePolicy::WherePays && kernels_run_on(x));
  }

 private:
  std::atomic<FusePolicy> policy_{FusePolicy::WherePays};
};

}  // namespace hamgan
