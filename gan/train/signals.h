// SIGINT/SIGTERM as a stop request: while a StopOnSignal is alive the first signal only
// sets a flag the training loop polls (it finishes the step and checkpoints); a second
// one gets the default action. The previous handlers come back on destruction.
#pragma once
#include <csignal>

namespace hamgan {

class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  static int requested();  // the signal number, or 0

 private:
  struct sigaction old_int_, old_term_;
};

}  // namespace hamgan
