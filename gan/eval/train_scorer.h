// Scoring while training (BigGAN-PyTorch's test_every + which_best, StyleGAN2-ADA's
// metric snapshots): every eval.every iterations the training loop writes a checkpoint
// and this scores its EMA generator exactly as `hamgan fid --run` would (eval.n samples
// from seed 0, the same scores.csv row and scores.png), then keeps the eval.keep_best best
// checkpoints by eval.best_metric (a metric of the registry, metrics/registry.cpp, ranked in
// its direction) as checkpoints/best_ckpt_<iteration>.pt: hard links (a copy
// where links fail) that checkpoint pruning never touches. Feature network: eval.features
// (a domain classifier), else Inception (eval.inception); reference: eval.real, else
// the training data, a class-balanced subset of eval.n images. The evaluation is the spec
// build_eval_spec makes of the eval: section (eval_spec_from_config, gan/eval/eval_spec.h), as
// it makes `hamgan fid --run`'s of the flags.
//
// It adapts the run scorer (gan/eval/run_scorer.h) to the loop's hook: the score's own random
// stream, the run's lock, the gaps and stale rows below, and the loop's TensorBoard log.
// A score measures training without moving it: it draws from its own seeded stream, and the
// default generators training draws from (CPU, and the scoring device's on CUDA) are restored
// afterwards. Every checkpoint at an eval point gets its row: one that a killed or failed score
// left without one is scored at the first score of the resumed run, and a row of an iteration
// whose checkpoint this run wrote anew (a stale or hand-made row) is replaced, not trusted.
#pragma once
#include <optional>
#include <string>

#include "gan/config/config.h"
#include "gan/checkpoint/checkpoint_hook.h"
#include "gan/eval/run_scorer.h"

namespace hamgan::eval {

// Loads the feature network and the reference now (errors before training starts: a metric,
// best_metric, reference, classifier or n the scores cannot honour or would mix into the
// table); the hook holds DIR/.fid.lock from then on (no `fid --run` of the same table meanwhile).
// On a data-parallel run every rank makes one: rank 0's scores; another rank's (`rank` > 0) is
// make_rank_scorer's (gan/eval/rank_scorer.h) on `device`, its training device (default the CPU).
EvalHook make_train_scorer(const Config& cfg, const std::string& run_dir, int rank = 0,
                           std::optional<torch::Device> device = std::nullopt);

// The seed of the stream a score draws from (weight initialisation of the generator it loads,
// standing statistics): the same for every score, whatever training has drawn.
constexpr uint64_t kScoringSeed = 0x73636f7265ull;  // "score"

}  // namespace hamgan::eval
