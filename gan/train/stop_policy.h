// When a training run stops early: a signal (SIGINT/SIGTERM: finish the step, checkpoint) or
// train.time_limit_minutes, agreed by every rank, which must stop at the same iteration or
// their all-reduces hang.
#pragma once
#include <chrono>
#include <optional>

#include "gan/train/signals.h"

namespace hamgan {

class DataParallel;

enum class TrainOutcome { Finished, Interrupted, TimeLimit };

class StopPolicy {
 public:
  // time_limit_minutes 0: none. dp null: one process. handle_signals: SIGINT/SIGTERM are
  // stop requests from now on (a second one kills, gan/train/signals.h). agree_every_step
  // false (ranks on GPUs): the ranks agree only at report points, where the step waits for the
  // device anyway; an all-reduce read back on the host every step would wait twice per step.
  StopPolicy(double time_limit_minutes, bool handle_signals, DataParallel* dp, bool agree_every_step = true);
  // Starts the clock (at the first step).
  void start();
  // After each step: Interrupted or TimeLimit when every rank should stop now. report_point:
  // the loop reports (syncs) after this step; the same on every rank.
  std::optional<TrainOutcome> check(bool report_point = true);
  // Seconds since start() as of the last check(), the ranks' mean (the lr schedule must agree).
  double elapsed_s() const { return elapsed_s_; }
  double time_limit_s() const { return limit_s_; }  // 0: none
  static int signal() { return StopOnSignal::requested(); }

 private:
  using clock = std::chrono::steady_clock;
  const double limit_s_;
  DataParallel* dp_;
  const bool every_step_;
  std::optional<StopOnSignal> signals_;
  clock::time_point t0_;
  double elapsed_s_ = 0;
};

}  // namespace hamgan
