// Test seams of train(), kept out of the production header: a callback after every
// iteration (to inject a NaN or a signal), the per-iteration statistics, and scripted latents.
#pragma once
#include <functional>
#include <vector>

#include "gan/train/trainer.h"

namespace hamgan {

struct TrainHooks {
  std::function<void(Trainer&)> after_step;   // runs after every iteration
  std::vector<IterStats>* history = nullptr;  // when set: every iteration's stats appended
};

// From now on every z / fake-label draw of `t` (n rows, on its device) is draw(n); the run
// RNG is unused.
void script_latents(Trainer& t, std::function<std::pair<torch::Tensor, torch::Tensor>(int64_t)> draw);

// train() of gan/train/trainer.h with hooks; that one is this with none.
TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source,
                  const TrainHooks& hooks);

}  // namespace hamgan
