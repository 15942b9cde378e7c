#include "gan/bench/op_profile.h"

#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <cstdio>
#include <map>

namespace hamgan {

namespace prof = torch::autograd::profiler;

OpProfile::OpProfile() {
  prof::enableProfilerLegacy(
      torch::profiler::impl::ProfilerConfig(torch::profiler::impl::ProfilerState::CPU));
  on_ = true;
}

OpProfile::~OpProfile() {
  if (on_) prof::disableProfilerLegacy();
}

std::vector<OpTime> OpProfile::stop() {
  on_ = false;
  const prof::thread_event_lists lists = prof::disableProfilerLegacy();
  std::map<std::string, OpTime> by_name;
  for (const auto& events : lists) {
    // Ranges nest on one thread: a pop closes the newest open push; its duration is
    // subtracted from the self time of the range that encloses it.
    struct Open {
      const prof::LegacyEvent* push;
      double child_us;
    };
    std::vector<Open> open;
    for (const auto& e : events) {
      if (e.kind() == prof::EventKind::PushRange) {
        open.push_back({&e, 0.0});
      } else if (e.kind() == prof::EventKind::PopRange && !open.empty()) {
        const Open o = open.back();
        open.pop_back();
        const double us = o.push->cpuElapsedUs(e);
        OpTime& t = by_name[o.push->name()];
        t.name = o.push->name();
        t.calls += 1;
        t.total_us += us;
        t.self_us += us - o.child_us;
        if (!open.empty()) open.back().child_us += us;
      }
    }
  }
  std::vector<OpTime> ops;
  for (auto& [name, t] : by_name) ops.push_back(std::move(t));
  std::sort(ops.begin(), ops.end(),
            [](const OpTime& a, const OpTime& b) { return a.self_us > b.self_us; });
  return ops;
}

void print_op_table(const std::vector<OpTime>& ops, double wall_us, size_t rows) {
  double all = 0;
  for (const auto& o : ops) all += o.self_us;
  std::printf("%-52s %8s %8s %10s %10s\n", "operator (by self time)", "calls", "self %",
              "self ms", "total ms");
  for (size_t i = 0; i < std::min(rows, ops.size()); ++i)
    std::printf("%-52.52s %8lld %7.1f%% %10.2f %10.2f\n", ops[i].name.c_str(),
                static_cast<long long>(ops[i].calls), 100.0 * ops[i].self_us / wall_us,
                ops[i].self_us / 1000, ops[i].total_us / 1000);
  std::printf("%-52s %8s %7.1f%% %10.2f   (the rest: outside operators)\n", "all operators", "",
              100.0 * all / wall_us, all / 1000);
}

}  // namespace hamgan
