// Every number the trainer logs, named once. Trainer::step computes the per-iteration
// statistics on the device in Stat order; the NaN check, the progress line and the keys of
// metrics.jsonl all take their names from kStatNames, and one report is a TrainStats.
#pragma once
#include <array>
#include <cstdint>

namespace hamgan {

enum Stat { kDLossReal, kDLossFake, kGLoss, kDReal, kDFake, kLeCam, kNumStats };
using IterStats = std::array<float, kNumStats>;

struct StatName {
  const char* key;    // metrics.jsonl
  const char* label;  // progress line
  const char* words;  // error messages
};
inline constexpr std::array<StatName, kNumStats> kStatNames = {{
    {"d_loss_real", "real", "D loss (real)"},
    {"d_loss_fake", "fake", "D loss (fake)"},
    {"g_loss", "G", "G loss"},
    {"d_real", "D(x)", "mean D(x)"},
    {"d_fake", "D(G(z))", "mean D(G(z))"},
    {"d_lecam", "LeCam", "LeCam term (before its weight)"},  // 0 when train.lecam_weight is 0
}};

// One report: the statistics averaged over the iterations since the previous report.
struct TrainStats {
  int64_t iteration = 0, total = 0;
  double wall_s = 0;          // since this process started training
  double it_s = 0, img_s = 0; // since the previous report; img/s counts real images seen by D (all ranks)
  std::array<double, kNumStats> stat{};
  double g_lr = 0, d_lr = 0;
  double time_left_s = -1;    // until train.time_limit_minutes; negative: no limit (not logged)

  double d_loss() const { return stat[kDLossReal] + stat[kDLossFake]; }
};

}  // namespace hamgan
