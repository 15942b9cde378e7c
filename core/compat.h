// The one place where LibTorch version differences live (Debian's 1.13 and pip's 2.x).
#pragma once
#include <ATen/Version.h>
#include <ATen/autocast_mode.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <chrono>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/cpu_features.h"

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

// Whether autocast is on for `device` (CPU or CUDA) now. LibTorch 2.4 renamed the getters.
inline bool autocast_enabled(at::DeviceType device) {
#if HAMGAN_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device == at::kCPU ? at::kCPU : at::kCUDA);
#else
  return device == at::kCPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

// Whether a convolution of `x` runs in a reduced float type: x is one, or autocast is on for
// x's device (where a layer chooses its kernel form by precision).
inline bool conv_runs_reduced(const torch::Tensor& x) {
  return is_reduced_float(x) || autocast_enabled(x.device().type());
}

// Whether LibTorch's CPU bf16 convolutions and matmuls accumulate in fp32 (so each rounds only
// its inputs and its output to bf16). They do through oneDNN, which 1.13 uses for bf16 where the
// CPU has AVX-512, and in 2.x's own GEMM. 1.13's own GEMM, its bf16 path on AVX2 CPUs, adds into
// the bf16 output: a k-term sum then errs by about 0.6 * 2^-9 * sqrt(k) relative (1.0%, 2.8%,
// 5.4% for k = 72, 576, 2304, measured) instead of the output rounding's 0.17%.
inline bool cpu_bf16_accumulates_in_fp32() {
  return HAMGAN_TORCH_AT_LEAST(2, 0) || cpu_isa() >= CpuIsa::avx512;
}

// Called as bf16 autocast starts on the CPU. With HAMGAN_CPU_ISA below avx512 on an AVX-512
// machine (scripts/emulate_cpu.sh), 1.13's ATen still sends bf16 to oneDNN (it asks cpuinfo,
// not the cap) and the capped oneDNN refuses it; turning ATen's oneDNN use off for the rest of
// the process takes 1.13's own bf16 path, as on a real AVX2 CPU (fp32 ops of that process then
// take ATen's own kernels too: same values, other speed). 2.x asks oneDNN itself (ideep), which
// follows ONEDNN_MAX_CPU_ISA.
inline void before_cpu_autocast() {
#if !HAMGAN_TORCH_AT_LEAST(2, 0)
  if (cpu_isa() < CpuIsa::avx512 && cpu_hardware_isa() >= CpuIsa::avx512)
    at::globalContext().setUserEnabledMkldnn(false);
#endif
}

// ATen's kernel class ("AVX2", "AVX512", ...: its "CPU capability usage", which follows
// ATEN_CPU_CAPABILITY), "unknown" where the build does not say.
inline std::string aten_cpu_capability() {
  const std::string cfg = at::show_config(), key = "CPU capability usage: ";
  const size_t at = cfg.find(key);
  if (at == std::string::npos) return "unknown";
  const size_t from = at + key.size();
  return cfg.substr(from, cfg.find('\n', from) - from);
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
    if (cpu_) before_cpu_autocast();
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
  bool is_enabled() const { return autocast_enabled(cpu_ ? at::kCPU : at::kCUDA); }
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

// Whether this LibTorch was built with CUDA (libc10_cuda registered its device guard),
// whether or not a GPU is present: the CPU-only Debian 1.13 says no, the pip wheel yes.
inline bool cuda_compiled() { return c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA); }

// Built against a CUDA LibTorch (CMake defines HAMGAN_CUDA for core/compat.cpp alone, so the
// CUDA headers are needed nowhere else).
bool cuda_build();
// Peak bytes of tensors the CUDA caching allocator held on `device` since the last reset
// (torch.cuda.max_memory_allocated); -1 in a build without CUDA.
int64_t cuda_peak_allocated(c10::DeviceIndex device);
void cuda_reset_peak(c10::DeviceIndex device);
// The GPU's compute capability, major part (bf16 tensor cores need >= 8, Ampere); -1 in a
// build without CUDA.
int cuda_capability_major(c10::DeviceIndex device);
// The GPU's name as the driver reports it ("NVIDIA H100 80GB HBM3"); "" in a build without CUDA.
std::string cuda_device_name(c10::DeviceIndex device);
// Makes `device` this process's current CUDA device (each rank its own GPU, before NCCL and
// any allocation); nothing in a build without CUDA.
void cuda_set_device(c10::DeviceIndex device);
// With `on`, every stream or device synchronisation LibTorch makes on a GPU (a blocking copy,
// item(), a synchronize) throws instead (torch.cuda.set_sync_debug_mode("error")): the GPU
// tests run training steps so, since a step must never wait for the device. Off: allowed again.
// Nothing in a build without CUDA.
void cuda_sync_errors(bool on);
// The current CUDA stream of `device` as a cudaStream_t (hand-written kernels launch on it, in
// order with LibTorch's own); hamgan::Error in a build without CUDA.
void* cuda_current_stream(c10::DeviceIndex device);

// Marks on `device`'s work queue, and the device time between consecutive marks: CUDA events
// on the current stream (recording one does not wait for the GPU), the host clock on the CPU,
// whose operators return when their work is done. The benchmark times steps without a
// synchronisation between them, as the training loop runs them.
class DeviceTimeline {
 public:
  explicit DeviceTimeline(torch::Device device);
  ~DeviceTimeline();
  DeviceTimeline(const DeviceTimeline&) = delete;
  DeviceTimeline& operator=(const DeviceTimeline&) = delete;
  void mark();
  // Waits for the device, then the milliseconds from each mark to the next (marks - 1 values).
  std::vector<double> intervals_ms();

 private:
  torch::Device device_;
  std::vector<std::chrono::steady_clock::time_point> host_;
  struct CudaEvents;
  std::unique_ptr<CudaEvents> cuda_;
};

// Adam's state of parameter `p`, or null before its first step. The optimizer's state map is
// keyed by the parameter's TensorImpl pointer in 2.x and by that pointer printed to a string
// (c10::guts::to_string) in 1.13.
template <class StateMap>
auto find_param_state(StateMap& state, const torch::Tensor& p) {
  if constexpr (std::is_same_v<typename StateMap::key_type, std::string>) {
    std::ostringstream key;
    key << p.unsafeGetTensorImpl();
    return state.find(key.str());
  } else {
    return state.find(p.unsafeGetTensorImpl());
  }
}
inline torch::optim::AdamParamState* adam_state(torch::optim::Optimizer& opt, const torch::Tensor& p) {
  const auto it = find_param_state(opt.state(), p);
  return it == opt.state().end() ? nullptr : static_cast<torch::optim::AdamParamState*>(it->second.get());
}
// Sets the state of parameter `p` (keyed as find_param_state reads it).
template <class StateMap>
void put_param_state(StateMap& state, const torch::Tensor& p, std::unique_ptr<torch::optim::OptimizerParamState> s) {
  if constexpr (std::is_same_v<typename StateMap::key_type, std::string>) {
    std::ostringstream key;
    key << p.unsafeGetTensorImpl();
    state[key.str()] = std::move(s);
  } else {
    state[p.unsafeGetTensorImpl()] = std::move(s);
  }
}
inline void set_adam_state(torch::optim::Optimizer& opt, const torch::Tensor& p,
                           std::unique_ptr<torch::optim::AdamParamState> s) {
  put_param_state(opt.state(), p, std::move(s));
}

// Whether fused_adam_step can run: ATen's multi-tensor _fused_adam_ kernel (CUDA and CPU
// since LibTorch 2.4; the C++ torch::optim::Adam itself never uses it).
inline constexpr bool kHasFusedAdam = HAMGAN_TORCH_AT_LEAST(2, 4);

// torch::optim::Adam::step for every parameter of `opt` in one fused kernel per group instead
// of ~6 kernels per parameter, on Adam's own state (exp_avg, exp_avg_sq, step), so checkpoints
// and opt.step() stay interchangeable. Only for groups whose parameters live on the CUDA
// device (or any device with `cpu_too`, for tests) and without amsgrad; returns false and
// does nothing otherwise (and always without kHasFusedAdam): the caller then calls opt.step().
inline bool fused_adam_step(torch::optim::Adam& opt, bool cpu_too = false) {
#if HAMGAN_TORCH_AT_LEAST(2, 4)
  for (auto& group : opt.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamOptions&>(group.options());
    if (o.amsgrad()) return false;
    for (const auto& p : group.params())
      if (!p.is_cuda() && !cpu_too) return false;
  }
  torch::NoGradGuard no_grad;
  for (auto& group : opt.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamOptions&>(group.options());
    std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
    // The kernel reads each parameter's (already incremented) step from a tensor; one scalar
    // on the device per distinct count (normally one: all parameters step together).
    std::map<int64_t, torch::Tensor> step_tensors;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = opt.state()[p.unsafeGetTensorImpl()];
      if (!slot) {  // lazily, as Adam::step does
        auto st = std::make_unique<torch::optim::AdamParamState>();
        st->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        st->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        slot = std::move(st);
      }
      auto& st = static_cast<torch::optim::AdamParamState&>(*slot);
      st.step(st.step() + 1);
      auto& t = step_tensors[st.step()];
      if (!t.defined())
        t = torch::full({}, static_cast<double>(st.step()), torch::TensorOptions(p.device()).dtype(torch::kFloat));
      steps.push_back(t);
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(st.exp_avg());
      exp_avg_sqs.push_back(st.exp_avg_sq());
    }
    if (params.empty()) continue;
    at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, o.lr(),
                     std::get<0>(o.betas()), std::get<1>(o.betas()), o.weight_decay(), o.eps(),
                     /*amsgrad=*/false, /*maximize=*/false);
  }
  return true;
#else
  (void)opt, (void)cpu_too;
  return false;
#endif
}

// "LibTorch 2.15.0 (2.x), CUDA compiled" or "LibTorch 1.13.0 (1.x), CPU only".
inline std::string libtorch_description() {
  return "LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + "." +
         std::to_string(TORCH_VERSION_MINOR) + "." + std::to_string(TORCH_VERSION_PATCH) + " (" +
         std::to_string(TORCH_VERSION_MAJOR) + ".x), " +
         (cuda_compiled() ? "CUDA compiled" : "CPU only");
}

}  // namespace hamgan::compat
