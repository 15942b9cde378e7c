// The one place where LibTorch version differences live (Debian's 1.13 and pip's 2.x).
#pragma once
#include <torch/torch.h>
#include <torch/version.h>

#define HAMGAN_TORCH_AT_LEAST(major, minor)                                   \
  (TORCH_VERSION_MAJOR > (major) ||                                           \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace hamgan::compat {

// Runs a scope with every autocast dispatch key excluded, so ops inside stay in the
// dtype of their inputs. Used for spectral-norm sigma, which must stay fp32 under AMP.
// The keyset exists under this name in 1.13 and 2.x.
class NoAutocast {
 public:
  NoAutocast() : guard_(c10::autocast_dispatch_keyset) {}

 private:
  c10::impl::ExcludeDispatchKeyGuard guard_;
};

// Whether the tensor's dtype is a reduced float type that autocast produces.
inline bool is_reduced_float(const torch::Tensor& t) {
  return t.scalar_type() == torch::kHalf || t.scalar_type() == torch::kBFloat16;
}

}  // namespace hamgan::compat
