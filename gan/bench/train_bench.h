// `hamgan bench train`: times full training iterations (n_dis D steps + G step + EMA) on
// synthetic data after warm-up; prints the median ms/iteration, images/s and the achieved model
// FLOP/s against `hamgan info`'s count (and peak memory on CUDA); optionally a table of the
// operators by self time.
#pragma once
#include <cstdint>

#include "gan/config/config.h"

namespace hamgan {

// profile: then --iters more iterations under the operator profiler (gan/bench/op_profile.h).
void run_train_bench(const Config& cfg, int64_t iters, int64_t warmup, bool profile = false);

}  // namespace hamgan
