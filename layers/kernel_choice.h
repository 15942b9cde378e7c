// Which form of a layer runs where two equal ones exist (up to summation order or rounding):
// the folded convolutions (train.folded_convs, train.upsample_conv) and hamgan's fused kernels in place of ATen's
// forms (train.fused_cbn_relu, train.bias_kernel, train.upsample_add_kernel). A choice is in
// force on one thread while a KernelScope holds it (a Trainer holds its own around every forward
// pass it runs), so two Trainers in one process each run their own; outside every scope, `auto`
// everywhere. The forms are picked in forward passes, so a backward pass follows its forward's.
#pragma once
#include <torch/torch.h>

#include "layers/cuda_tensor.h"

namespace hamgan {

enum class FoldPolicy {
  WherePays,  // auto: where measured faster (folded_conv_pays)
  Always,     // true: everywhere, GPUs and AMX CPUs included (to measure them there)
  Never,      // false: upsample + conv and conv + pool as written
};

enum class FusePolicy {
  WherePays,  // auto: on CUDA, where this build has the kernels (measured faster there, docs/gpu)
  Always,     // true: on every device (other devices run the fused form's ATen arithmetic, to test it)
  Never,      // false: the operations as written
};

// How a folded upsample + 3x3 convolution runs (train.upsample_conv; layers/upsample_conv.h).
enum class UpsampleConvForm {
  SubPixel,    // four 2x2 phase convolutions in one, then their interleave (a copy)
  Transposed,  // one stride-2 transposed convolution with the folded 4x4 kernel: no interleave
};

struct KernelChoice {
  FoldPolicy folded_convs = FoldPolicy::WherePays;
  UpsampleConvForm upsample_conv = UpsampleConvForm::SubPixel;
  FusePolicy fused_cbn_relu = FusePolicy::WherePays;
  FusePolicy bias_kernel = FusePolicy::WherePays;
  FusePolicy upsample_add_kernel = FusePolicy::WherePays;
};

// The choice in force on this thread: the innermost KernelScope's, else the defaults.
const KernelChoice& kernel_choice();

// Puts `choice` in force on this thread until destroyed (then the one before it again).
class KernelScope {
 public:
  explicit KernelScope(const KernelChoice& choice);
  ~KernelScope();
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 private:
  KernelChoice choice_;
  const KernelChoice* before_;
};

// Whether a fused form under `policy` runs for input x.
inline bool fuse_pays(FusePolicy policy, const torch::Tensor& x) {
  return policy == FusePolicy::Always || (policy == FusePolicy::WherePays && kernels_run_on(x));
}

}  // namespace hamgan
