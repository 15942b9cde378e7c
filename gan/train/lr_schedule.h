// Learning-rate schedule: the factor applied to train.g_lr and train.d_lr at a point of the run.
#pragma once
#include <cstdint>

#include "gan/config/config.h"

namespace hamgan {

// Fraction of the run's budget used so far: iteration / train.iterations, or, with
// train.time_limit_minutes, the larger of that and elapsed_s / (60 x limit) (the budget that
// ends first; elapsed_s counts from this invocation's start, so a resumed time-limited run
// decays again over its own minutes).
double budget_progress(const TrainConfig& t, int64_t iteration, double elapsed_s);

// train.lr_decay: "none" -> 1; "linear" -> 1 until progress train.lr_decay_from, then down
// linearly to 0 at the end of the budget (annealing the oscillation a constant-lr GAN keeps).
double lr_scale(const TrainConfig& t, double progress);

}  // namespace hamgan
