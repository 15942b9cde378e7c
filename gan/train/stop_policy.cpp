#include "gan/train/stop_policy.h"

#include <torch/torch.h>

#include <algorithm>

#include "gan/train/distributed.h"

namespace hamgan {

StopPolicy::StopPolicy(double time_limit_minutes, bool handle_signals, DataParallel* dp, bool agree_every_step)
    : limit_s_(time_limit_minutes * 60), dp_(dp), every_step_(agree_every_step) {
  // From the start: a signal while the models build or the data opens (seconds) stops the run
  // after its first step, with a checkpoint, instead of killing it.
  if (handle_signals) signals_.emplace();
}

void StopPolicy::start() { t0_ = clock::now(); }

std::optional<TrainOutcome> StopPolicy::check(bool report_point) {
  if (dp_ && !every_step_ && !report_point) return std::nullopt;  // every rank skips the same steps
  elapsed_s_ = std::chrono::duration<double>(clock::now() - t0_).count();
  bool time_up = limit_s_ > 0 && elapsed_s_ > limit_s_;
  int sig = signals_ ? StopOnSignal::requested() : 0;
  if (dp_) {
    torch::Tensor stop = torch::tensor({double(sig), time_up ? 1.0 : 0.0, elapsed_s_});
    dp_->all_reduce_sum(stop);
    // host read: every step on CPU ranks (nothing to wait for), at report points only on GPUs.
    sig = stop[0].item<double>() > 0 ? std::max(sig, 1) : 0;
    time_up = stop[1].item<double>() > 0;
    elapsed_s_ = stop[2].item<double>() / dp_->world_size();
  }
  if (sig) return TrainOutcome::Interrupted;
  if (time_up) return TrainOutcome::TimeLimit;
  return std::nullopt;
}

}  // namespace hamgan
