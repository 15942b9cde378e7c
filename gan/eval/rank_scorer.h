// The part of a data-parallel rank other than 0 in scoring while training: it loads the
// feature network alone (no reference, no table), and at each eval point samples its share of
// every score rank 0 starts (gan/eval/rank_share.h) until rank 0 says it is done. It reads the
// checkpoints rank 0 names and writes nothing.
#pragma once
#include <string>

#include "gan/checkpoint/checkpoint_hook.h"
#include "gan/config/config.h"

namespace hamgan::eval {

// `device`: this rank's training device (its own GPU).
EvalHook make_rank_scorer(const Config& cfg, const std::string& run_dir, torch::Device device);

}  // namespace hamgan::eval
