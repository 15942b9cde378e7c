// Where a step's device time goes, from LibTorch's Kineto profiler (core/compat_profiler.h):
// each GPU kernel's measured time counts for the innermost host operator that launched it, as
// torch.profiler's key_averages() prints "Self CUDA"; then the kernels themselves by name.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/compat_profiler.h"

namespace hamgan {

struct DeviceTime {
  std::string name;
  int64_t calls = 0;        // host operator: its calls; kernel: its launches
  double device_us = 0;     // the kernels' time on the device
};

struct DeviceProfile {
  std::vector<DeviceTime> operators;  // by device time, largest first; none with zero time
  std::vector<DeviceTime> kernels;    // by device time, largest first
  double device_us = 0;               // every kernel's time
  double unattributed_us = 0;         // kernels whose launching operator was not recorded
  // The device's timeline: span_us from the first kernel's start to the last one's end, busy_us
  // the part of it covered by kernels, copies or memsets (overlapping ones counted once).
  double span_us = 0, busy_us = 0;
  // The host's waits for the device (cudaStreamSynchronize, cudaEventSynchronize, a blocking
  // cudaMemcpy) and their time: a step must have none, each one drains the launch queue.
  int64_t host_waits = 0;
  double host_wait_us = 0;
  // busy_us / span_us: near 1, the device never waited for the host; -1 when nothing ran.
  double busy_fraction() const { return span_us > 0 ? busy_us / span_us : -1; }
};

DeviceProfile device_profile_of(const std::vector<compat::ProfiledEvent>& events);

// Both tables' first `rows` lines, per step (`steps` profiled), as shares of the device time.
void print_device_profile(const DeviceProfile& p, int64_t steps, size_t rows);

}  // namespace hamgan
