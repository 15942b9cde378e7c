// Checkpoints for the sampling and FID tests: a tiny 32x32 generator (3 classes, 1 channel)
// saved with save_checkpoint, its G and EMA G initialised from different seeds so a test
// can tell which one was used. Standing statistics are off (train.ema_standing_batches: 0):
// these checkpoints test sampling and scoring; standing statistics have their own tests
// (test_train).
#pragma once
#include <cstdint>
#include <string>

#include "gan/config/config.h"

namespace hamgan::test {

// The tiny model's YAML; `eval` is spliced into an `eval:` section when not empty.
std::string tiny_checkpoint_yaml(const std::string& eval = "");
// G from torch::manual_seed(seed), EMA G (when `ema`) from seed + 1000. The stored config is
// the resolved one, or `yaml` verbatim when raw_yaml (as an older hamgan without some section).
void write_tiny_checkpoint(const std::string& path, int64_t iteration, bool ema, uint64_t seed,
                           const std::string& yaml, bool raw_yaml = false);
// DIR/ckpt_000000010.pt: the tiny model at iteration 10 with EMA, seed 1. Returns its path.
std::string tiny_checkpoint_in(const std::string& dir);

}  // namespace hamgan::test
