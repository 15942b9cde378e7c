#include "core/compat_profiler.h"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/version.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"

namespace hamgan::compat {

namespace prof = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

void kineto_start(bool cuda) {
  std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
  if (cuda) activities.insert(impl::ActivityType::CUDA);
  const impl::ProfilerConfig config(impl::ProfilerState::KINETO);
  try {
    prof::prepareProfiler(config, activities);
    prof::enableProfiler(config, activities);
  } catch (const c10::Error& e) {
    fail("the Kineto profiler did not start (", e.what_without_backtrace(), ")");
  }
}

std::vector<ProfiledEvent> kineto_stop(const std::string& trace_path) {
  const std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
  std::vector<ProfiledEvent> out;
  for (const prof::KinetoEvent& e : result->events()) {
    ProfiledEvent p;
    p.name = e.name();
    p.on_device = e.deviceType() != c10::DeviceType::CPU;
#if TORCH_VERSION_MAJOR >= 2
    p.start_us = static_cast<double>(e.startNs()) / 1000.0;
    p.duration_us = static_cast<double>(e.durationNs()) / 1000.0;
#else
    p.start_us = static_cast<double>(e.startUs());
    p.duration_us = static_cast<double>(e.durationUs());
#endif
    p.correlation = e.correlationId();
    p.linked_correlation = e.linkedCorrelationId();
    out.push_back(std::move(p));
  }
  if (!trace_path.empty()) {
    result->save(trace_path);
    // A LibTorch built without Kineto (Debian's 1.13) records operators but writes no trace.
    if (!std::ifstream(trace_path).good())
      fail(trace_path, ": no trace was written: this LibTorch ", TORCH_VERSION_MAJOR, ".", TORCH_VERSION_MINOR, " was built without Kineto");
  }
  return out;
}

bool writes_traces() {
  static const bool yes = [] {
    const std::string probe = (std::filesystem::temp_directory_path() /
                               ("hamgan_trace_probe_" + std::to_string(::getpid()) + ".json")).string();
    try {
      kineto_start(false);
      kineto_stop(probe);
    } catch (const std::exception&) {
      std::remove(probe.c_str());
      return false;
    }
    std::remove(probe.c_str());
    return true;
  }();
  return yes;
}

}  // namespace hamgan::compat
