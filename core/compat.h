// The one place where LibTorch version differences live (Debian's 1.13 and pip's 2.x).
#pragma once
#include <ATen/autocast_mode.h>
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

// CUDA autocast to `dtype` for a scope (training forward passes under AMP); restores the
// previous state and clears the cast cache on exit, like torch.autocast's __exit__.
// The setters were renamed in LibTorch 2.4 (set_enabled -> set_autocast_enabled(device)).
class CudaAutocast {
 public:
  CudaAutocast(bool enabled, at::ScalarType dtype = at::kBFloat16) : enabled_(enabled) {
    if (!enabled_) return;
#if HAMGAN_TORCH_AT_LEAST(2, 4)
    prev_enabled_ = at::autocast::is_autocast_enabled(at::kCUDA);
    prev_dtype_ = at::autocast::get_autocast_dtype(at::kCUDA);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, dtype);
#else
    prev_enabled_ = at::autocast::is_enabled();
    prev_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(dtype);
#endif
    at::autocast::increment_nesting();
  }
  ~CudaAutocast() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if HAMGAN_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_enabled(at::kCUDA, prev_enabled_);
    at::autocast::set_autocast_dtype(at::kCUDA, prev_dtype_);
#else
    at::autocast::set_enabled(prev_enabled_);
    at::autocast::set_autocast_gpu_dtype(prev_dtype_);
#endif
  }
  CudaAutocast(const CudaAutocast&) = delete;
  CudaAutocast& operator=(const CudaAutocast&) = delete;

 private:
  bool enabled_, prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kBFloat16;
};

}  // namespace hamgan::compat
