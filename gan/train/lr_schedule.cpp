#include "gan/train/lr_schedule.h"

#include <algorithm>

namespace hamgan {

double budget_progress(const TrainConfig& t, int64_t iteration, double elapsed_s) {
  double p = t.iterations > 0 ? static_cast<double>(iteration) / static_cast<double>(t.iterations) : 1.0;
  if (t.time_limit_minutes > 0) p = std::max(p, elapsed_s / (60.0 * t.time_limit_minutes));
  return std::clamp(p, 0.0, 1.0);
}

double lr_scale(const TrainConfig& t, double progress) {
  if (t.lr_decay == LrDecay::None || progress <= t.lr_decay_from) return 1.0;
  return std::clamp((1.0 - progress) / (1.0 - t.lr_decay_from), 0.0, 1.0);
}

}  // namespace hamgan
