// The optional parts of the training step behind one interface: D's regularisers and
// augmentations (DiffAugment, ADA, LeCam, R1, R2) and G's (mode seeking). Trainer::step stays BigGAN's
// algorithm (n_dis D steps, then the G step) and calls every enabled feature at the same few
// points:
//   D's images     augment(): the images D sees, real and fake alike, in both steps (DiffAugment's T, ADA's)
//   D step begins  begin_d_step(): with the run's D-step count (lazy regularisers pick their steps)
//   D's loss       d_loss(): a term added to one micro-batch's D loss (LeCam, R1)
//   D step ends    end_d_step(): after the step's backward passes, with the step's mean outputs
//   G's loss       g_loss(): a term added to one micro-batch's G loss (mode seeking)
// and reads its statistics (every iteration: metrics.jsonl, TensorBoard, the NaN check) and its
// checkpointed state. A new feature is its own file plus one entry in step_features.cpp's
// registry.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gan/checkpoint/checkpoint.h"
#include "gan/config/config.h"
#include "gan/train/train_stats.h"

namespace hamgan {

class DataParallel;

// One micro-batch of the G step, after D's forward pass on its fakes.
struct GMicroBatch {
  torch::Tensor z, y;     // G's latents and labels
  torch::Tensor fake;     // G(z, y), in G's graph (before augment())
  torch::Tensor d_fake;   // D's raw outputs on the fakes (fp32)
  double scale = 1;       // 1 / train.accumulate
};

// One micro-batch of a D step, after D's forward pass.
struct DMicroBatch {
  torch::Tensor x_real;          // the real images before augment() (a leaf that requires grad when asked)
  torch::Tensor x_fake;          // the fakes before augment(), detached from G (a leaf that requires grad when asked)
  torch::Tensor o_real, o_fake;  // D's raw outputs on real and on fake (fp32)
  double scale = 1;              // 1 / train.accumulate: this micro-batch's share of the step
};

class StepFeature {
 public:
  virtual ~StepFeature() = default;
  // T(x) for the batch D sees; draws come from `rng`, the trainer's checkpointed run RNG.
  virtual torch::Tensor augment(const torch::Tensor& x, at::Generator& rng) { return x; }
  // `d_step`: D steps before this one since the run began (iteration x n_dis + s; the same
  // after a resume).
  virtual void begin_d_step(int64_t d_step) {}
  // Whether this D step needs the gradient of D's output with respect to the real images.
  virtual bool wants_real_grad() const { return false; }
  // Whether it needs the gradient of D's output with respect to the fakes.
  virtual bool wants_fake_grad() const { return false; }
  // The term added to this micro-batch's D loss (before the 1 / accumulate of the step);
  // undefined: none.
  virtual torch::Tensor d_loss(const DMicroBatch& b) { return {}; }
  // After the D step's backward passes and the ranks' gradient average, before the optimizer:
  // the step's mean D(x) and D(G(z)) on this rank (0-dim; `dp` null: one process).
  virtual void end_d_step(const torch::Tensor& mean_real, const torch::Tensor& mean_fake, DataParallel* dp) {}
  // The term added to one micro-batch's G loss (before the 1 / accumulate of the step);
  // undefined: none.
  virtual torch::Tensor g_loss(const GMicroBatch& b) { return {}; }
  // This iteration's values of the entry's statistics, in its order: 0-dim fp32 on the device.
  virtual std::vector<torch::Tensor> stats() const { return {}; }
  // State that must survive a checkpoint (name -> tensor, names unique across features), and
  // its restore; a checkpoint without it (the feature was off) leaves the fresh state.
  virtual std::vector<std::pair<std::string, torch::Tensor>> state() const { return {}; }
  virtual void restore(const CheckpointData& c) {}
  // A new run's train.init_from checkpoint `c` (another run's): state the feature carries into
  // the fine-tuning run, said on `log`.
  virtual void init_from(const CheckpointData& c, std::ostream& log) {}
};

struct StepFeatureEntry {
  std::string name;
  // Its statistics: in every record of every run, 0 while the feature is off.
  std::vector<StatName> stats;
  // Its config: whether train.* turns it on.
  std::function<bool(const TrainConfig&)> enabled;
  std::function<std::unique_ptr<StepFeature>(const Config&, torch::Device)> create;
};

// Every feature, in the order the step calls them (step_features.cpp).
const std::vector<StepFeatureEntry>& step_feature_registry();

// acc += v * scale, v detached (acc undefined at first): a statistic's mean over the
// micro-batches of a step.
inline void accumulate_scaled(torch::Tensor& acc, const torch::Tensor& v, double scale) {
  const torch::Tensor t = v.detach() * scale;
  acc = acc.defined() ? acc + t : t;
}

// fn(feature) for every enabled feature of `features` (create_step_features' vector), in order.
template <typename Features, typename Fn>
void each_feature(Features& features, Fn&& fn) {
  for (auto& f : features)
    if (f) fn(*f);
}

// The enabled features of a config, created, in registry order (null for those off).
std::vector<std::unique_ptr<StepFeature>> create_step_features(const Config& cfg, torch::Device device);

}  // namespace hamgan
