// The CUDA-only parts of core/compat.h: compiled with the CUDA headers where CMake found a
// CUDA LibTorch (HAMGAN_CUDA, set on this file only).
#include "core/compat.h"

#ifdef HAMGAN_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "core/error.h"

namespace hamgan::compat {

#ifdef HAMGAN_CUDA
bool cuda_build() { return true; }

int64_t cuda_peak_allocated(c10::DeviceIndex device) {
  constexpr auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  return c10::cuda::CUDACachingAllocator::getDeviceStats(device).allocated_bytes[all].peak;
}

void cuda_reset_peak(c10::DeviceIndex device) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(device);
}

int cuda_capability_major(c10::DeviceIndex device) { return at::cuda::getDeviceProperties(device)->major; }

std::string cuda_device_name(c10::DeviceIndex device) { return at::cuda::getDeviceProperties(device)->name; }

void cuda_set_device(c10::DeviceIndex device) { c10::cuda::set_device(device); }
void cuda_sync_errors(bool on) {
  c10::cuda::warning_state().set_sync_debug_mode(on ? c10::cuda::SyncDebugMode::L_ERROR
                                                    : c10::cuda::SyncDebugMode::L_DISABLED);
}
void* cuda_current_stream(c10::DeviceIndex device) { return at::cuda::getCurrentCUDAStream(device).stream(); }
#else
bool cuda_build() { return false; }
int64_t cuda_peak_allocated(c10::DeviceIndex) { return -1; }
void cuda_reset_peak(c10::DeviceIndex) {}
int cuda_capability_major(c10::DeviceIndex) { return -1; }
std::string cuda_device_name(c10::DeviceIndex) { return ""; }
void cuda_set_device(c10::DeviceIndex) {}
void cuda_sync_errors(bool) {}
void* cuda_current_stream(c10::DeviceIndex) { fail("a CUDA stream in a LibTorch built without CUDA"); }
#endif

#ifdef HAMGAN_CUDA
struct DeviceTimeline::CudaEvents {
  std::vector<at::cuda::CUDAEvent> events;
};
#else
struct DeviceTimeline::CudaEvents {};
#endif

DeviceTimeline::DeviceTimeline(torch::Device device) : device_(device) {
  if (device.is_cuda()) {
#ifdef HAMGAN_CUDA
    cuda_ = std::make_unique<CudaEvents>();
#else
    fail("DeviceTimeline: ", device.str(), " in a LibTorch built without CUDA");
#endif
  }
}

DeviceTimeline::~DeviceTimeline() = default;

void DeviceTimeline::mark() {
#ifdef HAMGAN_CUDA
  if (cuda_) {
    cuda_->events.emplace_back(cudaEventDefault);  // timing on
    cuda_->events.back().record(at::cuda::getCurrentCUDAStream(device_.index()));
    return;
  }
#endif
  host_.push_back(std::chrono::steady_clock::now());
}

std::vector<double> DeviceTimeline::intervals_ms() {
  std::vector<double> ms;
#ifdef HAMGAN_CUDA
  if (cuda_) {
    auto& e = cuda_->events;
    if (!e.empty()) e.back().synchronize();
    for (size_t i = 1; i < e.size(); ++i) ms.push_back(e[i - 1].elapsed_time(e[i]));
    return ms;
  }
#endif
  for (size_t i = 1; i < host_.size(); ++i)
    ms.push_back(std::chrono::duration<double, std::milli>(host_[i] - host_[i - 1]).count());
  return ms;
}

}  // namespace hamgan::compat
