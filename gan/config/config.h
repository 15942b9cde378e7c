// The resolved hamgan configuration: typed structs read from YAML with overrides.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "layers/context/context.h"
#include "layers/fold_taps.h"

namespace hamgan {

// The word-valued keys (core/config_reader.h's Words): each enum's words are its YAML values.
enum class InitScheme { Orthogonal, Xavier, Normal };  // model.init; Normal is N(0, 0.02)
enum class GanLoss { Hinge, NonSaturating };            // train.loss (gan/train/losses.h)
enum class AmpMode { Auto, On, Off };                   // train.amp: auto | true | false (gan/train/amp.h)
enum class DeviceChoice { Auto, Cpu, Cuda };            // train.device: auto | cpu | cuda
enum class LrDecay { None, Linear };                    // train.lr_decay (gan/train/lr_schedule.h)
enum class DataFormat { Auto, Fmnist, Cifar10, Folder, Packed };  // data.format; auto: from data.path
extern const Words<InitScheme> kInitWords;
extern const Words<GanLoss> kLossWords;
extern const Words<AmpMode> kAmpWords;
extern const Words<FoldPolicy> kFoldWords;
extern const Words<DeviceChoice> kDeviceWords;
extern const Words<LrDecay> kLrDecayWords;
extern const Words<DataFormat> kDataFormatWords;

struct ModelConfig {
  int64_t resolution = 128;      // 32, 64 or 128
  int64_t n_classes = 1000;
  int64_t image_channels = 3;
  InitScheme init = InitScheme::Orthogonal;
  double sn_eps = 1e-6;
  double bn_eps = 1e-5;
};

struct GeneratorConfig {
  int64_t ch = 64;
  int64_t z_dim = 128;
  int64_t shared_dim = 0;  // 0: per-class CBN embeddings; >0: BigGAN shared embedding
  bool hier = false;       // BigGAN hierarchical z (needs shared_dim > 0)
  ContextConfig context;
};

struct DiscriminatorConfig {
  int64_t ch = 64;
  ContextConfig context;
};

// train.diffaug (gan/train/diff_augment.h): which of DiffAugment's transforms run on every image
// D sees, real and fake; YAML: a comma list of color, translation, cutout ("" none).
struct DiffAugPolicy {
  bool color = false, translation = false, cutout = false;
  bool any() const { return color || translation || cutout; }
};

struct TrainConfig {
  int64_t batch_size = 64;
  int64_t iterations = 100000;
  double g_lr = 1e-4;
  double d_lr = 4e-4;
  double beta1 = 0.0;
  double beta2 = 0.999;
  int64_t n_dis = 1;
  GanLoss loss = GanLoss::Hinge;
  int64_t seed = 0;
  double adam_eps = 1e-8;
  int64_t accumulate = 1;          // micro-batches per step; each has batch_size / accumulate
  bool ema = true;                 // exponential moving average of G (BigGAN)
  double ema_decay = 0.9999;
  int64_t ema_start = 1000;        // iterations before this copy G instead of averaging
  AmpMode amp = AmpMode::Auto;     // bf16 autocast (gan/train/amp.h)
  double ema_rampup = 0.05;        // EMA half-life <= this x updates so far (0: plain ema_decay)
  int64_t ema_standing_batches = 16;  // BN standing statistics of EMA G over this many batches (0: G's); BigGAN's 16
  bool channels_last = true;       // NHWC weights and images (gan/models/memory_format.h): faster on CPU and CUDA
  FoldPolicy folded_convs = FoldPolicy::WherePays;  // auto | true | false (layers/fold_taps.h)
  bool cudnn_benchmark = true;     // CUDA: cuDNN times its algorithms per shape once, keeps the fastest
  DeviceChoice device = DeviceChoice::Auto;
  int64_t log_every = 50;
  int64_t sample_every = 1000;
  bool tensorboard = true;         // TensorBoard events in <run>/tensorboard/ (gan/train/tensorboard_log.h)
  int64_t checkpoint_every = 1000;
  int64_t keep_checkpoints = 3;    // newest K valid checkpoints kept
  double time_limit_minutes = 0;   // 0: none; else checkpoint and stop after this long
  LrDecay lr_decay = LrDecay::None;
  double lr_decay_from = 0.5;      // linear: fraction of the budget where the decay starts
  bool sync_bn = false;            // data parallel: G's BN statistics over the global batch
  // n_dis 1: G's step reuses the D step's fakes (one G forward per iteration, not two; the
  // DCGAN example's step) instead of drawing new ones (BigGAN's). G's activations stay alive
  // through D's step (with accumulate: every micro-batch's). gan/train/trainer.cpp.
  bool reuse_fake = false;
  // Against D overfitting the real set: DiffAugment (Zhao et al. 2020; the paper's
  // policy is color,translation,cutout) and LeCam (Tseng et al. 2021; lambda 0.3 in the
  // paper's BigGAN runs, anchors an EMA of decay 0.99). Both off by default.
  DiffAugPolicy diffaug;
  double lecam_weight = 0.0;       // lambda of the LeCam term in D's loss (gan/train/lecam.h)
  double lecam_decay = 0.99;       // its anchors' EMA decay
  // Fine-tuning (gan/train/init_from.h): a new run starts from G, D and EMA G of this hamgan
  // checkpoint ("": from scratch); class-conditional tensors are re-initialised when
  // model.n_classes differs. A resumed run ignores it. init_optimizer: Adam's moments too.
  std::string init_from;
  bool init_optimizer = false;
  // FreezeD (Mo et al. 2020, "Freeze the Discriminator"): D's first freeze_d blocks keep their
  // weights (no gradient, not in D's optimizer).
  int64_t freeze_d = 0;
};

struct DataConfig {
  DataFormat format = DataFormat::Fmnist;
  std::string path = "/usr/share/datasets/fashion-mnist";
};

// The most samples one `fid --checkpoint/--run` draws (eval.fid_n, -n): fid keeps 2048
// features per sample in memory (8 GB at the bound).
constexpr int64_t kMaxFidSamples = 1'000'000;

// The most batches BN standing statistics are re-estimated over (train.ema_standing_batches,
// and `sample`/`export --standing-batches`): each is a generator forward pass, so a bound keeps
// a typo from running for days.
constexpr int64_t kMaxStandingBatches = 100'000;

// Evaluation, in training and by `hamgan fid` (gan/eval/eval_spec.h). Scoring while training
// (gan/eval/train_scorer.h): every `every` iterations (0: off) a checkpoint is written and its
// EMA G scored as `fid --run` would, into scores.csv. Inception weights path ("" = --inception
// or $HAMGAN_INCEPTION must give one) and the default number of samples `hamgan fid
// --run/--checkpoint` draws serve both.
struct EvalConfig {
  int64_t every = 0;
  int64_t n = 1000;                   // samples, and real images of the reference, per score
  std::string features;               // domain classifier (fid --features); "": Inception
  std::string real;                   // reference (.npz, images, data source); "": data.path
  std::string metrics = "fid";        // as fid --metrics: metric names (metrics/registry.cpp), checked when read
  std::string best_metric = "fid";    // a metric of a run's table (metrics/registry.cpp); ranks the kept best checkpoints
  int64_t keep_best = 1;              // checkpoints/best_ckpt_<iteration>.pt by best_metric, never pruned
  std::string inception;
  int64_t fid_n = 10000;
};

// The keys that the eval: section took over from train: (train.eval_n -> eval.n, ...): read
// under their new name, with a note (configs of older runs and checkpoints still load).
const std::vector<std::pair<std::string, std::string>>& moved_eval_keys();

struct Config {
  ModelConfig model;
  GeneratorConfig generator;
  DiscriminatorConfig discriminator;
  TrainConfig train;
  DataConfig data;
  EvalConfig eval;
  std::string source;   // file it came from
  YAML::Node resolved;  // every key with its resolved value
};

// Reads `path` (and its `base:` chain: a preset lists only what differs from its base),
// applies "a.b=value" overrides, validates every key. Each default lives in the structs above.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});
// Same, from YAML text (tests, checkpoints); `name` stands for the file in messages.
Config parse_config(const std::string& yaml_text, const std::string& name,
                    const std::vector<std::string>& overrides = {});

std::string to_yaml(const YAML::Node& node);

}  // namespace hamgan
