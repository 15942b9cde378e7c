// The resolved hamgan configuration: typed structs read from YAML with overrides.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/config_keys.h"
#include "layers/context/context.h"
#include "layers/kernel_choice.h"

namespace hamgan {

// The word-valued keys (core/config_reader.h's Words): each enum's words are its YAML values.
enum class InitScheme { Orthogonal, Xavier, Normal };  // model.init; Normal is N(0, 0.02)
enum class GanLoss { Hinge, NonSaturating, Relativistic };  // train.loss (gan/train/losses.h)
enum class AmpMode { Auto, On, Off };                   // train.amp: auto | true | false (gan/train/amp.h)
enum class Tf32Mode { Auto, On, Off };                  // train.tf32: auto | true | false (gan/train/amp.h)
enum class DeviceChoice { Auto, Cpu, Cuda };            // train.device: auto | cpu | cuda
enum class DistBackend { Auto, Nccl, Gloo, Shm };       // train.dist_backend (gan/train/distributed.h)
enum class LrDecay { None, Linear };                    // train.lr_decay (gan/train/lr_schedule.h)
enum class DataFormat { Auto, Fmnist, Cifar10, Folder, Packed };  // data.format; auto: from data.path
extern const Words<InitScheme> kInitWords;
extern const Words<GanLoss> kLossWords;
extern const Words<AmpMode> kAmpWords;
extern const Words<FoldPolicy> kFoldWords;
extern const Words<UpsampleConvForm> kUpsampleConvWords;
extern const Words<FusePolicy> kFuseWords;
extern const Words<Tf32Mode> kTf32Words;
extern const Words<DeviceChoice> kDeviceWords;
extern const Words<DistBackend> kDistBackendWords;
extern const Words<LrDecay> kLrDecayWords;
extern const Words<DataFormat> kDataFormatWords;

// The sections of a config. Each field is a key; its range, meaning and what a resume may do
// with it are its row in gan/config/config_keys.cpp (the default: the initializer here).
struct ModelConfig {
  int64_t resolution = 128;
  int64_t n_classes = 1000;
  int64_t image_channels = 3;
  InitScheme init = InitScheme::Orthogonal;
  double sn_eps = 1e-6;
  double bn_eps = 1e-5;
};

struct GeneratorConfig {
  int64_t ch = 64;
  std::vector<int64_t> ch_mult;  // per block boundary (gan/config/arch.h); empty: BigGAN's table
  int64_t z_dim = 128;
  int64_t shared_dim = 0;
  bool hier = false;
  ContextConfig context;
};

struct DiscriminatorConfig {
  int64_t ch = 64;
  std::vector<int64_t> ch_mult;  // per block (gan/config/arch.h); empty: BigGAN's table
  ContextConfig context;
  int64_t mbstd_group = 0;     // minibatch standard deviation before the last block (layers/minibatch_std.h); 0: off
  int64_t mbstd_features = 1;
};

// train.diffaug (gan/train/diff_augment.h): which of DiffAugment's transforms run on every image
// D sees, real and fake; YAML: a comma list of color, translation, cutout ("" none).
struct DiffAugPolicy {
  bool color = false, translation = false, cutout = false;
  bool any() const { return color || translation || cutout; }
};

// train.ada (gan/train/ada.h): which groups of StyleGAN2-ADA's pipeline run on every image D
// sees; YAML: letters of "bgc" in that order (b: x-flip, 90-degree rotations, integer translation;
// g: scaling, rotation, anisotropic scaling, fractional translation; c: colour), "" none.
struct AdaPolicy {
  bool blit = false, geom = false, color = false;
  bool any() const { return blit || geom || color; }
};

struct TrainConfig {
  int64_t batch_size = 64;
  int64_t iterations = 100000;
  double g_lr = 1e-4;
  double d_lr = 4e-4;
  double beta1 = 0.0;
  double d_beta1 = 0.0;  // train.d_beta1: as beta1 unless the config gives it
  double beta2 = 0.999;
  int64_t n_dis = 1;
  GanLoss loss = GanLoss::Hinge;
  int64_t seed = 0;
  double adam_eps = 1e-8;
  int64_t accumulate = 1;
  bool ema = true;
  double ema_decay = 0.9999;
  int64_t ema_start = 1000;
  AmpMode amp = AmpMode::Auto;
  double ema_rampup = 0.05;
  int64_t ema_standing_batches = 16;
  bool channels_last = true;
  FoldPolicy folded_convs = FoldPolicy::WherePays;
  UpsampleConvForm upsample_conv = UpsampleConvForm::SubPixel;
  FusePolicy fused_cbn_relu = FusePolicy::WherePays;
  FusePolicy bias_kernel = FusePolicy::WherePays;
  FusePolicy upsample_add_kernel = FusePolicy::WherePays;
  Tf32Mode tf32 = Tf32Mode::Auto;
  bool cudnn_benchmark = true;
  DeviceChoice device = DeviceChoice::Auto;
  DistBackend dist_backend = DistBackend::Auto;
  int64_t log_every = 50;
  int64_t sample_every = 1000;
  bool tensorboard = true;
  int64_t checkpoint_every = 1000;
  int64_t keep_checkpoints = 3;
  double time_limit_minutes = 0;
  LrDecay lr_decay = LrDecay::None;
  double lr_decay_from = 0.5;
  bool sync_bn = false;
  bool reuse_fake = false;
  DiffAugPolicy diffaug;
  double lecam_weight = 0.0;
  double lecam_decay = 0.99;
  double r1_gamma = 0.0;
  int64_t r1_every = 16;
  double r2_gamma = 0.0;
  int64_t r2_every = 16;
  AdaPolicy ada;
  double ada_p = 0.0;
  double ada_target = 0.6;
  int64_t ada_interval = 4;
  double ada_kimg = 500;
  bool init_ada_p = false;
  double mode_seeking = 0.0;
  int64_t class_group = 1;
  std::string init_from;
  bool init_optimizer = false;
  int64_t freeze_d = 0;
};

struct DataConfig {
  DataFormat format = DataFormat::Fmnist;
  std::string path = "/usr/share/datasets/fashion-mnist";
  int64_t limit = 0;  // data.limit: train on this many images (a class-balanced subset); 0: all
};

// The most samples one `fid --checkpoint/--run` draws (eval.fid_n, -n): fid keeps 2048
// features per sample in memory (8 GB at the bound).
constexpr int64_t kMaxFidSamples = 1'000'000;

// The most batches BN standing statistics are re-estimated over (train.ema_standing_batches,
// and `sample`/`export --standing-batches`): each is a generator forward pass, so a bound keeps
// a typo from running for days.
constexpr int64_t kMaxStandingBatches = 100'000;

// Evaluation, in training (gan/eval/train_scorer.h) and by `hamgan fid` (gan/eval/eval_spec.h).
struct EvalConfig {
  int64_t every = 0;
  int64_t n = 1000;
  std::string features;
  std::string real;
  std::string metrics = "fid";
  std::string best_metric = "fid";
  int64_t keep_best = 1;
  std::string inception;
  int64_t fid_n = 10000;
};

// The keys that the eval: section took over from train: (train.eval_n -> eval.n, ...) in
// pre-release builds: an error naming the key it is now.
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

// Every key the sections' tables (gan/config/config_keys.h) read, in the resolved config's
// order, with its default; a context block's own keys as its default type reads them
// (layers/context/context.h context_keys for each type's).
std::vector<KeyInfo> config_keys();

std::string to_yaml(const YAML::Node& node);

}  // namespace hamgan
