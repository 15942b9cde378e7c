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

// Autocast to `dtype` on `device` (CPU or CUDA) for a scope (training forward passes under
// AMP); restores the previous state and clears the cast cache on exit, like torch.autocast's
// __exit__. LibTorch 2.4 renamed the setters (set_cpu_enabled / set_enabled ->
// set_autocast_enabled(device), set_autocast_cpu_dtype -> set_autocast_dtype(device)).
class Autocast {
 public:
  Autocast(bool enabled, at::DeviceType device, at::ScalarType dtype = at::kBFloat16)
      : enabled_(enabled), cpu_(device == at::kCPU) {
    if (!enabled_) return;
    prev_enabled_ = is_enabled();
    prev_dtype_ = get_dtype();
    set(true, dtype);
    at::autocast::increment_nesting();
  }
  ~Autocast() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    set(prev_enabled_, prev_dtype_);
  }
  Autocast(const Autocast&) = delete;
  Autocast& operator=(const Autocast&) = delete;

 private:
  bool is_enabled() const {
#if HAMGAN_TORCH_AT_LEAST(2, 4)
    return at::autocast::is_autocast_enabled(cpu_ ? at::kCPU : at::kCUDA);
#else
    return cpu_ ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
  }
  at::ScalarType get_dtype() const {
#if HAMGAN_TORCH_AT_LEAST(2, 4)
    return at::autocast::get_autocast_dtype(cpu_ ? at::kCPU : at::kCUDA);
#else
    return cpu_ ? at::autocast::get_autocast_cpu_dtype() : at::autocast::get_autocast_gpu_dtype();
#endif
  }
  void set(bool on, at::ScalarType dtype) const {
#if HAMGAN_TORCH_AT_LEAST(2, 4)
    at::autocast::set_autocast_enabled(cpu_ ? at::kCPU : at::kCUDA, on);
    at::autocast::set_autocast_dtype(cpu_ ? at::kCPU : at::kCUDA, dtype);
#else
    if (cpu_) {
      at::autocast::set_cpu_enabled(on);
      at::autocast::set_autocast_cpu_dtype(dtype);
    } else {
      at::autocast::set_enabled(on);
      at::autocast::set_autocast_gpu_dtype(dtype);
    }
#endif
  }

  bool enabled_, cpu_, prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kBFloat16;
};

}  // namespace hamgan::compat
