#include "gan/bench/device_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <utility>

namespace hamgan {

namespace {
std::vector<DeviceTime> sorted(std::map<std::string, DeviceTime>& by_name) {
  std::vector<DeviceTime> v;
  for (auto& [name, t] : by_name) v.push_back(std::move(t));
  std::stable_sort(v.begin(), v.end(), [](const DeviceTime& a, const DeviceTime& b) { return a.device_us > b.device_us; });
  return v;
}

void print_table(const char* title, const std::vector<DeviceTime>& rows_of, double all_us, int64_t steps, size_t rows) {
  const double per = 1.0 / static_cast<double>(std::max<int64_t>(steps, 1));
  std::printf("%-60s %9s %8s %12s\n", title, "calls", "device", "ms per step");
  for (size_t i = 0; i < std::min(rows, rows_of.size()); ++i) {
    const DeviceTime& t = rows_of[i];
    std::printf("%-60.60s %9.1f %7.1f%% %12.3f\n", t.name.c_str(), static_cast<double>(t.calls) * per,
                all_us > 0 ? 100.0 * t.device_us / all_us : 0.0, t.device_us * per / 1000);
  }
}
// CUDA runtime calls that block the host until queued device work is done (the runtime's own
// names, as Kineto records them).
bool is_host_wait(const std::string& name) {
  return name == "cudaStreamSynchronize" || name == "cudaEventSynchronize" || name == "cudaMemcpy";
}
}  // namespace

DeviceProfile device_profile_of(const std::vector<compat::ProfiledEvent>& events) {
  std::unordered_map<uint64_t, std::string> op_of;  // host operator's id -> its name
  std::map<std::string, DeviceTime> ops, kernels;
  DeviceProfile p;
  for (const auto& e : events)
    if (!e.on_device) {
      if (e.correlation != 0) op_of[e.correlation] = e.name;
      if (is_host_wait(e.name)) {
        p.host_waits += 1;
        p.host_wait_us += e.duration_us;
      }
      DeviceTime& t = ops[e.name];
      t.name = e.name;
      t.calls += 1;
    }
  std::vector<std::pair<double, double>> spans;  // each device event's [start, end)
  for (const auto& e : events) {
    if (!e.on_device) continue;
    spans.emplace_back(e.start_us, e.start_us + e.duration_us);
    p.device_us += e.duration_us;
    DeviceTime& k = kernels[e.name];
    k.name = e.name;
    k.calls += 1;
    k.device_us += e.duration_us;
    const auto op = op_of.find(e.linked_correlation);
    if (op == op_of.end()) {
      p.unattributed_us += e.duration_us;
      continue;
    }
    ops[op->second].device_us += e.duration_us;
  }
  p.operators = sorted(ops);
  p.operators.erase(std::remove_if(p.operators.begin(), p.operators.end(),
                                   [](const DeviceTime& t) { return t.device_us <= 0; }),
                    p.operators.end());
  p.kernels = sorted(kernels);
  // The union of the intervals: streams may overlap, and a gap is time the device waited.
  std::sort(spans.begin(), spans.end());
  double covered_to = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    const auto [a, b] = spans[i];
    if (i == 0) covered_to = a;
    p.busy_us += std::max(0.0, b - std::max(a, covered_to));
    covered_to = std::max(covered_to, b);
  }
  if (!spans.empty()) p.span_us = covered_to - spans.front().first;
  return p;
}

void print_device_profile(const DeviceProfile& p, int64_t steps, size_t rows) {
  const double per = 1.0 / static_cast<double>(std::max<int64_t>(steps, 1));
  std::printf("device time %.3f ms per step over %lld steps", p.device_us * per / 1000, static_cast<long long>(steps));
  if (p.unattributed_us > 0)
    std::printf(" (%.1f%% from kernels of no recorded operator)", 100.0 * p.unattributed_us / p.device_us);
  std::printf("\n");
  if (p.span_us > 0)
    std::printf("device busy %.1f%% of its timeline (%.3f ms of kernels, copies and memsets in %.3f ms per step)\n",
                100.0 * p.busy_fraction(), p.busy_us * per / 1000, p.span_us * per / 1000);
  if (p.host_waits > 0)
    std::printf("host waits for the device: %.1f per step (%.3f ms per step; cudaStreamSynchronize, cudaEventSynchronize, cudaMemcpy)\n",
                static_cast<double>(p.host_waits) * per, p.host_wait_us * per / 1000);
  else
    std::printf("host waits for the device: none\n");
  print_table("operator (by the device time of the kernels it launched)", p.operators, p.device_us, steps, rows);
  std::printf("\n");
  print_table("kernel (by device time)", p.kernels, p.device_us, steps, rows);
}

}  // namespace hamgan
