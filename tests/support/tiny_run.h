// The tiny training run that test_train and test_checkpoint share: a SAGAN at 32x32 small
// enough to train in a second, its synthetic data (or one fixed batch), a fresh directory and a
// quiet train().
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/state_dict.h"
#include "gan/config/config.h"
#include "gan/train/train_hooks.h"
#include "gan/train/trainer.h"

namespace hamgan::test {

// A tiny SAGAN at 32x32 (attention in G and D); every code path of the step is exercised:
// n_dis 2, two accumulated micro-batches, EMA copying before iteration 2, averaging after.
// `extra`: space-separated key=value overrides.
Config tiny(const std::string& extra = "");
// 10 synthetic images: with batch 2, five batches an epoch, so runs cross epoch boundaries.
SourceFactory synthetic(const Config& cfg);
// The same real batch every call.
class FixedSource : public BatchSource {
 public:
  explicit FixedSource(Batch b) : b_(std::move(b)) {}
  Batch next() override { return b_; }
  LoaderState state() const override { return {}; }

 private:
  Batch b_;
};
// An empty directory under the temporary directory.
std::string fresh_dir(const std::string& name);

struct Ran : TrainResult {
  std::vector<IterStats> history;  // every iteration of this call
  std::string log;                 // what train() printed
};
// train() into `dir`, its output kept in Ran::log.
Ran run(const Config& cfg, const std::string& dir, TrainHooks hooks = {});

// Expects `r` to have warned that it skipped the damaged checkpoint `damaged`, resumed from
// `resumed` and trained `iterations` iterations, every statistic finite.
void expect_resumed_past_damaged(const Ran& r, const std::string& damaged, const std::string& resumed,
                                 size_t iterations);

struct Loaded {
  TensorMap g, d, g_ema;
};
Loaded load_models(const std::string& path);

}  // namespace hamgan::test
