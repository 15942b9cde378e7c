// The GAN training loop (SAGAN/BigGAN recipe): per iteration n_dis D steps, one G step,
// then the EMA of G. The step's optional parts (DiffAugment before D, LeCam and R1 in D's loss)
// are step features (gan/train/step_feature.h). Each step may accumulate gradients over
// micro-batches. Adam with TTUR learning rates; hinge or non-saturating loss; bf16 autocast
// per train.amp (gan/train/amp.h).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/phase_progress.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/checkpoint/checkpoint_hook.h"
#include "gan/config/config.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/train/batch_source.h"
#include "gan/train/ema.h"
#include "gan/train/losses.h"
#include "gan/train/resume_check.h"
#include "gan/train/step_feature.h"
#include "gan/train/stop_policy.h"
#include "gan/train/train_kernels.h"
#include "gan/train/train_stats.h"

namespace hamgan {

class DataParallel;

class Trainer {
 public:
  Trainer(const Config& cfg, torch::Device device);
  Trainer(Trainer&&) = default;

  // Models, optimizers, RNG and iteration from a checkpoint of the same model config.
  void restore(const CheckpointData& c);
  // What the step features carry from a fine-tuning run's train.init_from checkpoint (after
  // gan/train/init_from.h has copied the models), said on `log`.
  void carry_feature_state(const CheckpointData& c, std::ostream& log);
  // One iteration; never waits for the device (losses stay on it, see stats()).
  void step(BatchSource& real);
  // standing false: the EMA G's standing statistics are left to whoever loads the checkpoint
  // (gan/checkpoint's load_generator computes them), as a stop request wants it fast.
  void save(const std::string& path, const LoaderState& loader, bool standing = true);
  // What save() writes (models, optimizers, RNG states: "sample", "cpu_default", and
  // "cuda_default" when training on CUDA).
  CheckpointWrite checkpoint(const LoaderState& loader, bool standing = true);
  // Images from the EMA G when enabled (with its standing statistics), else G; eval mode,
  // no grad, nothing else changes state.
  torch::Tensor sample(const torch::Tensor& z, const torch::Tensor& y);

  int64_t iteration() const { return iteration_; }
  int64_t micro_batch() const { return cfg_.train.batch_size / cfg_.train.accumulate; }
  torch::Tensor stats() const { return stats_; }  // floats on the device, in stat_names() order
  const Config& config() const { return cfg_; }
  torch::Device device() const { return device_; }
  bool amp() const { return amp_; }
  Generator& g() { return g_; }
  Discriminator& d() { return d_; }
  Generator* g_ema() { return ema_ ? &g_ema_ : nullptr; }
  torch::optim::Adam& opt_g() { return *opt_g_; }
  torch::optim::Adam& opt_d() { return *opt_d_; }
  // Data parallel from here on: rank 0's G, D and EMA G go to every rank, gradients are
  // averaged after each backward, and each rank draws its own z and fake labels (after
  // restore(): a resumed rank > 0 takes its own random streams from the checkpoint).
  void set_data_parallel(DataParallel* dp);
  // Every rank, before a checkpoint: each rank's random streams go to every rank (a collective),
  // so rank 0's checkpoint holds them all and a resumed run draws what an unbroken one would.
  void share_rank_rng();
  // Where the slow phases outside the step (standing statistics) report progress; null: nowhere.
  void set_say(PhaseProgress::Say say) { say_ = std::move(say); }
  // Called where each phase of step() begins, with its name, and with null where the step
  // ends (`hamgan bench train --profile`'s device time per phase); spectral norm's power
  // iteration, DiffAugment and the step features' loss terms (R1's input gradient) run inside
  // the D forward phases. Null: nothing is called.
  void set_phase_mark(std::function<void(const char* phase)> mark) { phase_mark_ = std::move(mark); }
  // Both optimizers' learning rates become train.g_lr / d_lr times `scale` (gan/train/lr_schedule.h).
  void set_lr_scale(double scale);
  double lr_scale() const { return lr_scale_; }

 private:
  // This rank's generators by checkpoint name: the z stream, the CPU's default, on CUDA the GPU's.
  std::vector<std::pair<std::string, torch::Tensor>> rng_states() const;
  // The z stream, the CPU's default generator and, on CUDA where given, the GPU's, from states.
  void set_rng_states(const torch::Tensor& sample, const torch::Tensor& cpu, const std::optional<torch::Tensor>& cuda);
  // Rank r > 0's z stream from the seed, the rank and the iteration (a new rank's).
  void reseed_rank_stream();
  friend void script_latents(Trainer&, std::function<std::pair<torch::Tensor, torch::Tensor>(int64_t)>);
  // n latents z and fake labels on the device, drawn from the checkpointed run RNG.
  std::pair<torch::Tensor, torch::Tensor> sample_zy(int64_t n);
  // The D step's means over its micro-batches (the statistics of the last D step are reported).
  struct DStepStats {
    torch::Tensor loss_real, loss_fake, real, fake;
  };
  // What one micro-batch of the last D step leaves for the G step: its fakes with G's graph,
  // their latents and labels (train.reuse_fake; else undefined), and its real images and labels
  // (for a loss that pairs fakes with reals).
  struct Kept {
    torch::Tensor fake, z, y, real, real_y;
  };
  // One micro-batch of a D step: its loss's gradients added to D's, its means to `st`.
  void d_micro_batch(BatchSource& real, double scale, std::vector<Kept>& kept, DStepStats& st);
  // One micro-batch of the G step (fakes from `kept` under train.reuse_fake, else fresh): its
  // gradients added to G's; returns G's adversarial loss.
  torch::Tensor g_micro_batch(const Kept& kept, double scale);
  // The images D sees, through every step feature's augment() (x itself when none).
  torch::Tensor augment(const torch::Tensor& x);
  // This iteration's statistics in stat_names() order: the step's, then each feature's.
  torch::Tensor collect_stats(const DStepStats& d, const torch::Tensor& g_loss) const;
  void phase(const char* name) {
    if (phase_mark_) phase_mark_(name);
  }
  // Standing statistics for the EMA G's current weights (once per iteration).
  void ensure_standing_stats();

  Config cfg_;
  torch::Device device_;
  DataParallel* dp_ = nullptr;
  bool amp_;
  TrainKernels kernels_;  // in force around every pass the Trainer runs
  GanLoss loss_;
  Generator g_{nullptr}, g_ema_{nullptr};
  Discriminator d_{nullptr};
  std::unique_ptr<torch::optim::Adam> opt_g_, opt_d_;
  std::unique_ptr<Ema> ema_;
  std::vector<std::unique_ptr<StepFeature>> features_;  // step_feature_registry() order, null when off
  at::Generator rng_;  // z and fake labels; its state is checkpointed
  std::vector<std::pair<std::string, torch::Tensor>> rank_rng_;  // share_rank_rng's, ranks > 0
  std::vector<std::pair<std::string, torch::Tensor>> restored_rng_;  // restore()'s checkpoint's
  int64_t iteration_ = 0;
  double lr_scale_ = 1.0;
  PhaseProgress::Say say_;
  int64_t standing_at_ = -1;  // iteration whose EMA weights the EMA G's BN statistics fit
  torch::Tensor stats_;
  std::function<std::pair<torch::Tensor, torch::Tensor>(int64_t)> scripted_zy_;  // tests: train_hooks.h
  std::function<void(const char*)> phase_mark_;
};

struct TrainOptions {
  std::string out_dir;            // checkpoints/, samples/, metrics.jsonl
  bool handle_signals = true;     // SIGINT/SIGTERM: finish the step, checkpoint, stop
  std::ostream* out = nullptr;    // progress and messages; null: std::cout
  DataParallel* dp = nullptr;     // multi-process: only rank 0 writes files and reports
  std::optional<torch::Device> device;  // this rank's; unset: train_device(train.device, dp)
  std::vector<std::string> class_names;  // the data's (synsets); a new run writes classes.txt
  EvalHook eval;                          // eval.every's scorer (gan/checkpoint/checkpoint_hook.h); null: none
};

struct TrainResult {
  TrainOutcome outcome = TrainOutcome::Finished;
  int64_t iteration = 0;
};

// Makes the real-image source for micro-batches of `batch_size`, positioned at `start`.
using SourceFactory =
    std::function<std::unique_ptr<BatchSource>(int64_t batch_size, LoaderState start)>;

// The fake labels of one draw: n labels uniform over `classes`, one per run of `run` (train.class_group),
// as the loader's real runs (gan/data/class_runs.h); n must be a multiple of run.
torch::Tensor draw_fake_labels(int64_t n, int64_t classes, int64_t run, at::Generator& gen);

// Trains to cfg.train.iterations, resuming from the newest valid checkpoint in
// out_dir/checkpoints. A model-changing config on resume, or a NaN/Inf loss: hamgan::Error
// (the last good checkpoint is kept). Tests' hooks: gan/train/train_hooks.h.
TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source);

}  // namespace hamgan
