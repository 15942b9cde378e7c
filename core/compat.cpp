// The CUDA-only parts of core/compat.h: compiled with the CUDA headers where CMake found a
// CUDA LibTorch (HAMGAN_CUDA, set on this file only).
#include "core/compat.h"

#ifdef HAMGAN_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

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
#else
bool cuda_build() { return false; }
int64_t cuda_peak_allocated(c10::DeviceIndex) { return -1; }
void cuda_reset_peak(c10::DeviceIndex) {}
int cuda_capability_major(c10::DeviceIndex) { return -1; }
std::string cuda_device_name(c10::DeviceIndex) { return ""; }
void cuda_set_device(c10::DeviceIndex) {}
#endif

}  // namespace hamgan::compat
