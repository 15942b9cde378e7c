// Every number the trainer logs, named once. Trainer::step computes the per-iteration
// statistics on the device in stat_names() order: the step's own (Stat), then each step
// feature's (gan/train/step_feature.h, in registry order). The NaN check, the progress line,
// TensorBoard and the keys of metrics.jsonl all take their names from stat_names(), and one
// report is a TrainStats.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hamgan {

// The step's own statistics, first in every record.
enum Stat { kDLossReal, kDLossFake, kGLoss, kDReal, kDFake, kNumStepStats };

struct StatName {
  const char* key;    // metrics.jsonl
  const char* label;  // progress line
  const char* words;  // error messages
};
inline constexpr StatName kStepStatNames[kNumStepStats] = {
    {"d_loss_real", "real", "D loss (real)"},
    {"d_loss_fake", "fake", "D loss (fake)"},
    {"g_loss", "G", "G loss"},
    {"d_real", "D(x)", "mean D(x)"},
    {"d_fake", "D(G(z))", "mean D(G(z))"},
};

// The step's statistics, then every registered step feature's (step_features.cpp): the same
// keys in every record of every run, whatever the config turns on.
const std::vector<StatName>& stat_names();
// The index of `key` in stat_names(); an unknown key is a hamgan::Error naming the known ones.
int64_t stat_index(const std::string& key);
// One iteration's statistics, in stat_names() order.
using IterStats = std::vector<float>;

// One report: the statistics averaged over the iterations since the previous report.
struct TrainStats {
  int64_t iteration = 0, total = 0;
  double wall_s = 0;          // since this process started training
  double it_s = 0, img_s = 0; // since the previous report; img/s counts real images seen by D (all ranks)
  std::vector<double> stat;   // stat_names() order
  double g_lr = 0, d_lr = 0;
  double time_left_s = -1;    // until train.time_limit_minutes; negative: no limit (not logged)

  double d_loss() const { return stat[kDLossReal] + stat[kDLossFake]; }
};

}  // namespace hamgan
