// Test seams of train(), kept out of the production header: a callback after every
// iteration (to inject a NaN or a signal) and the per-iteration statistics. Trainer's
// latent draw is a protected virtual (sample_zy) that a test subclass can script.
#pragma once
#include <functional>
#include <vector>

#include "gan/train/trainer.h"

namespace hamgan {

struct TrainHooks {
  std::function<void(Trainer&)> after_step;   // runs after every iteration
  std::vector<IterStats>* history = nullptr;  // when set: every iteration's stats appended
};

// train() of gan/train/trainer.h with hooks; that one is this with none.
TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source,
                  const TrainHooks& hooks);

}  // namespace hamgan
