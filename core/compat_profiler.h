// LibTorch's Kineto profiler behind two calls: host operators and, on CUDA, the GPU's kernels
// with the times the GPU measured. The one place that knows the profiler's API of this build
// (microseconds in 1.13's events, nanoseconds in 2.x's).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hamgan::compat {

struct ProfiledEvent {
  std::string name;
  bool on_device = false;  // a GPU kernel or copy (else a host operator)
  double start_us = 0, duration_us = 0;
  // A host operator's own id; a kernel's linked id is that of the innermost operator that
  // launched it (as torch.profiler's key_averages() attributes kernels).
  uint64_t correlation = 0, linked_correlation = 0;
};

// Starts recording this process's operators, and with `cuda` the GPU activity. A LibTorch
// without Kineto: hamgan::Error.
void kineto_start(bool cuda);
// Stops; writes the Chrome trace (chrome://tracing, ui.perfetto.dev) to `trace_path` unless it
// is empty; returns every recorded event.
std::vector<ProfiledEvent> kineto_stop(const std::string& trace_path);
// Whether this LibTorch writes Chrome traces (Kineto built in; Debian's 1.13 records operators
// without one): a moment's empty profile, once, so that a request for a trace is refused before
// a long profile rather than after it.
bool writes_traces();

}  // namespace hamgan::compat
