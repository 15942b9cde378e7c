#include "core/phase_progress.h"

#include <cstdio>
#include <iostream>

namespace hamgan {

void PhaseProgress::to_stderr(const std::string& line) { std::cerr << line << std::endl; }

PhaseProgress::PhaseProgress(Say say, std::string what, int64_t total, std::string unit, double quiet_s,
                             double every_s)
    : say_(std::move(say)), what_(std::move(what)), unit_(std::move(unit)), total_(total),
      quiet_s_(quiet_s), every_s_(every_s), t0_(clock::now()), last_(t0_) {}

PhaseProgress::~PhaseProgress() {
  if (printed_) line(", done");
}

double PhaseProgress::seconds() const { return std::chrono::duration<double>(clock::now() - t0_).count(); }

void PhaseProgress::add(int64_t n) {
  done_ += n;
  if (!say_) return;
  const auto now = clock::now();
  const double since_start = std::chrono::duration<double>(now - t0_).count();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  if (since_start < quiet_s_ || (printed_ && since_last < every_s_)) return;
  if (total_ > 0 && done_ >= total_) return;  // the closing line says it
  line("");
}

void PhaseProgress::line(const char* suffix) {
  char buf[64];
  if (total_ > 0)
    std::snprintf(buf, sizeof buf, ": %lld/%lld ", static_cast<long long>(done_), static_cast<long long>(total_));
  else
    std::snprintf(buf, sizeof buf, ": %lld ", static_cast<long long>(done_));
  char t[48];
  std::snprintf(t, sizeof t, " (%.1f s%s)", seconds(), suffix);
  say_(what_ + buf + unit_ + t);
  printed_ = true;
  last_ = clock::now();
}

}  // namespace hamgan
