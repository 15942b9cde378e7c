// What a training run tells its user: the banner, a progress line and a metrics.jsonl row per
// report (the one sync with the device: the per-step stats pile up until then), the NaN/Inf
// check over every step, metrics.png, the speed after warm-up and the final line. Only the lead
// rank prints and writes.
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "gan/checkpoint/checkpoint.h"
#include "gan/config/config.h"
#include "gan/train/progress.h"
#include "gan/train/stop_policy.h"
#include "io/tensorboard_log.h"
#include "gan/train/train_stats.h"

namespace hamgan {

class Trainer;
class RunDir;

class Reporter {
 public:
  // `out` null: std::cout. `history` (tests): every iteration's stats appended.
  Reporter(const Config& cfg, std::ostream* out, bool lead, int world, std::vector<IterStats>* history);
  std::ostream& out() { return out_; }

  // "resuming from ..." when resumed, then device, precision, batch, budget and schedule.
  void banner(const Trainer& t, const std::optional<CheckpointData>& resumed, const RunDir& dir);
  // From the first step on: metrics.jsonl in `dir`, the clock.
  void start(const Trainer& t, const RunDir& dir);
  // After each step: its stats, kept on the device until report().
  void add(const Trainer& t);
  // Reads the pending stats back, fails on a NaN/Inf (naming the checkpoint kept), reports.
  void report(const Trainer& t, const StopPolicy& stop, const RunDir& dir);
  void finish(TrainOutcome outcome, const Trainer& t, const RunDir& dir);
  // A line of its own (the lead rank only): what a slow phase is doing.
  void message(const std::string& text);
  // The run's TensorBoard events (train.tensorboard), from start() on: each report's metrics
  // are written there too; grids and scores are the trainer's and the scorer's to add.
  TensorBoardLog& tensorboard() { return *tensorboard_; }

 private:
  // Once, at the second report (the first holds the warm-up): the speed and the end's ETA.
  void announce_speed(const Trainer& t, double it_s, const StopPolicy& stop);

  using clock = std::chrono::steady_clock;
  const Config& cfg_;
  const bool lead_;
  const int world_;
  std::vector<IterStats>* history_;
  std::ostringstream quiet_;
  std::ostream& out_;
  std::optional<Progress> progress_;
  std::optional<TensorBoardLog> tensorboard_;
  clock::time_point t0_, last_report_;
  int64_t last_report_it_ = 0, reports_ = 0;
  std::vector<torch::Tensor> pending_;
};

}  // namespace hamgan
