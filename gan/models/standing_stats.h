// BigGAN's "standing statistics" (Brock et al. 2019, Appendix C.1; BigGAN-PyTorch
// utils.accumulate_standing_stats): the BN running statistics of an averaged (EMA) generator
// are re-estimated for its own weights instead of borrowing the live G's, which belong to
// other weights. The running mean and variance of every BN layer are reset and accumulated
// as a cumulative average over `batches` forward passes of random (z, class) in training
// mode; then the generator is back in eval mode. Only the BN layers run in training mode:
// spectral norm's u/v and every other buffer are left as they are.
#pragma once
#include <cstdint>

#include "core/phase_progress.h"

#include "gan/models/generator.h"

namespace hamgan {

struct StandingStatsOptions {
  int64_t batches = 200;
  int64_t batch_size = 64;
  int64_t n_classes = 1;
  uint64_t seed = 0;  // z ~ N(0, I) and uniform classes from this seed: reproducible
  PhaseProgress::Say say;  // progress lines when it takes long (core/phase_progress.h)
};

void accumulate_standing_stats(GeneratorImpl& g, const StandingStatsOptions& o);

// What the config asks for: train.ema_standing_batches batches of the training micro-batch,
// model.n_classes classes, a seed derived from train.seed (the same in training and sampling).
StandingStatsOptions standing_stats_options(const Config& cfg);

}  // namespace hamgan
