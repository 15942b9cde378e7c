#include "gan/config/config_keys.h"

#include <set>
#include <sstream>

#include "core/error.h"
#include "metrics/metric.h"

namespace hamgan {

using namespace keys;

const KeyTable<ModelConfig>& model_keys() {
  using M = ModelConfig;
  static const KeyTable<M> table(OnResume::Model, {
      integer_of("resolution", &M::resolution, {32, 64, 128},
                 "image size (square); picks the G and D block tables (gan/config/arch.cpp)"),
      integer("n_classes", &M::n_classes, 1, 1 << 20,
              "classes of the conditional GAN; `train` checks it against the data's class count before it writes anything"),
      row<M>("image_channels", "integer", "1 or 3", "channels of the images (1 gray, 3 RGB)",
             [](ConfigNode& n, M& m) {
               m.image_channels = n.integer("image_channels", m.image_channels);
               if (m.image_channels != 1 && m.image_channels != 3)
                 n.fail_key("image_channels", "expected 1 or 3, got " + std::to_string(m.image_channels));
             }),
      word("init", &M::init, kInitWords, "weight initialisation of G and D; `normal` is N(0, 0.02)"),
      real("sn_eps", &M::sn_eps, closed(0, 1), "epsilon of spectral normalisation (as `torch.nn.utils.spectral_norm`)"),
      real("bn_eps", &M::bn_eps, closed(0, 1), "epsilon of batch norm (G's conditional BN)"),
  });
  return table;
}

const KeyTable<GeneratorConfig>& generator_keys() {
  using G = GeneratorConfig;
  static const KeyTable<G> table(OnResume::Model, {
      integer("ch", &G::ch, 1, 4096, "width: block channels are multiples of `ch` (G: 16, 16, 8, 4, 2, 1 x ch at 128 px)"),
      integers("ch_mult", &G::ch_mult, 1, 1024,
               "the multipliers of `ch` from G's 4x4 input through each block's output (gan/config/arch.h); []: "
               "BigGAN's (128 px: 16, 16, 8, 4, 2, 1; 64: 16, 16, 8, 4, 2; 32: 4, 4, 4, 4)")
          .also("as many as BigGAN's at `model.resolution`"),
      integer("z_dim", &G::z_dim, 1, 65536, "latent size")
          .also("with `hier`, a multiple of the number of blocks + 1"),
      integer("shared_dim", &G::shared_dim, 0, 65536,
              "0: per-class embeddings in each conditional BN; > 0: BigGAN's shared class embedding of this size"),
      boolean("hier", &G::hier, "BigGAN's hierarchical z: one chunk of z per block plus one for the input")
          .also("needs `shared_dim` > 0"),
      mapping("context", &G::context, parse_context_config, "`type` and that module's keys",
              "G's global-context block (the context module keys below)"),
  });
  return table;
}

const KeyTable<DiscriminatorConfig>& discriminator_keys() {
  using D = DiscriminatorConfig;
  static const KeyTable<D> table(OnResume::Model, {
      integer("ch", &D::ch, 1, 4096, "width: block channels are multiples of `ch` (D: 1, 2, 4, 8, 16, 16 x ch at 128 px)"),
      integers("ch_mult", &D::ch_mult, 1, 1024,
               "the multipliers of `ch` of each block's output (gan/config/arch.h); []: BigGAN's (128 px: 1, 2, 4, "
               "8, 16, 16; 64: 1, 2, 4, 8, 16; 32: 4, 4, 4, 4)")
          .also("as many as BigGAN's at `model.resolution`"),
      mapping("context", &D::context, parse_context_config, "`type` and that module's keys",
              "D's global-context block (the context module keys below)"),
      integer("mbstd_group", &D::mbstd_group, 0, 1 << 20,
              "minibatch standard deviation (ProGAN; layers/minibatch_std.h): the last block also sees how much "
              "each group of this many consecutive images differs (StyleGAN2's 4), a gradient against samples "
              "that look alike; 0: off"),
      integer("mbstd_features", &D::mbstd_features, 1, 4096,
              "feature maps the minibatch standard deviation adds (channel groups it averages over separately; "
              "StyleGAN2's 1)"),
  });
  return table;
}

namespace {

// "color,translation,cutout" -> flags; each word at most once (the order is fixed: diff_augment.h).
DiffAugPolicy diffaug_policy(ConfigNode& t, const std::string& key, const std::string& text) {
  DiffAugPolicy p;
  std::stringstream in(text);
  std::string word;
  std::set<std::string> seen;
  const std::string expected = "expected a comma-separated list of color, translation, cutout (\"\": none), got '" + text + "'";
  while (std::getline(in, word, ',')) {
    word.erase(0, word.find_first_not_of(' '));
    word.erase(word.find_last_not_of(' ') + 1);
    if (!seen.insert(word).second) t.fail_key(key, expected + " ('" + word + "' twice)");
    if (word == "color") p.color = true;
    else if (word == "translation") p.translation = true;
    else if (word == "cutout") p.cutout = true;
    else t.fail_key(key, expected);
  }
  return p;
}

std::string diffaug_text(const DiffAugPolicy& p) {
  std::string out;
  const auto add = [&](bool on, const char* word) {
    if (on) out += (out.empty() ? "" : ",") + std::string(word);
  };
  add(p.color, "color"), add(p.translation, "translation"), add(p.cutout, "cutout");
  return out;
}

// "bgc" -> groups; each letter at most once, in that order (ADA's pipeline order: ada.h).
AdaPolicy ada_policy(ConfigNode& t, const std::string& key, const std::string& text) {
  const std::string expected = "expected the letters of \"bgc\" in that order (b: blit, g: geometric, c: colour; "
                               "\"\": none), got '" + text + "'";
  AdaPolicy p;
  size_t at = 0;
  for (const auto& [letter, flag] : {std::pair<char, bool*>{'b', &p.blit}, {'g', &p.geom}, {'c', &p.color}})
    if (at < text.size() && text[at] == letter) *flag = true, ++at;
  if (at != text.size()) t.fail_key(key, expected);
  return p;
}

std::string ada_text(const AdaPolicy& p) {
  return std::string(p.blit ? "b" : "") + (p.geom ? "g" : "") + (p.color ? "c" : "");
}

}  // namespace

const KeyTable<TrainConfig>& train_keys() {
  using T = TrainConfig;
  static const KeyTable<T> table(OnResume::Change, {
      integer("batch_size", &T::batch_size, 1, 1 << 20, "images per step and rank (the global batch is this x the ranks)"),
      integer("iterations", &T::iterations, 0, int64_t(1) << 40,
              "the iteration training stops at; a resumed run continues to it, so raising it trains a finished run further"),
      real("g_lr", &T::g_lr, closed(0, 1), "Adam learning rate of G"),
      real("d_lr", &T::d_lr, closed(0, 1), "Adam learning rate of D"),
      // Adam needs beta < 1 and eps > 0 (beta 1 divides by zero in its bias correction; eps 0
      // divides by zero on a zero gradient): named here, not by the optimizer or a NaN later.
      real("beta1", &T::beta1, closed_open(0, 1), "Adam beta1 of G, and of D unless `d_beta1` is given"),
      // Adam's equations hold for any beta1 in (-1, 1); below 0 the moment extrapolates from the
      // last gradient (Gidel et al. 2019, negative momentum: it damps the rotation of the
      // alternating game's updates).
      real_or("d_beta1", &T::d_beta1, &T::beta1, open_open(-1, 1),
              "Adam beta1 of D (default: `beta1`); below 0, negative momentum on D (Gidel et al. 2019)"),
      real("beta2", &T::beta2, closed_open(0, 1), "Adam beta2 of both optimizers"),
      integer("n_dis", &T::n_dis, 1, 100, "D steps per G step"),
      word("loss", &T::loss, kLossWords, "the GAN loss (gan/train/losses.h)"),
      integer("seed", &T::seed, 0, "seeds the weights, the latents, the data order and the training grid's fixed latents"),
      real("adam_eps", &T::adam_eps, open_closed(0, 1), "Adam epsilon"),
      integer("accumulate", &T::accumulate, 1, 1 << 20,
              "micro-batches per step, each of `batch_size / accumulate` images: the same step in less memory")
          .also("a divisor of `batch_size`"),
      boolean("ema", &T::ema, "keep an exponential moving average of G's weights (BigGAN); `sample`, `fid` and the grids use it"),
      real("ema_decay", &T::ema_decay, closed(0, 1), "decay of the EMA"),
      integer("ema_start", &T::ema_start, 0, "iterations before this copy G into the EMA instead of averaging"),
      real("ema_rampup", &T::ema_rampup, closed(0, 1),
           "the EMA's half-life is at most this fraction of the updates so far (StyleGAN2-ADA's ramp-up); 0: plain `ema_decay`"),
      integer("ema_standing_batches", &T::ema_standing_batches, 0, kMaxStandingBatches,
              "BigGAN's standing statistics: the EMA G's BN statistics re-estimated over this many batches before it "
              "samples or is saved (BigGAN's 16); 0: off"),
      word("amp", &T::amp, kAmpWords,
           "bf16 autocast of the forward passes (gan/train/amp.h); `auto`: on for CUDA GPUs of compute capability >= 8 "
           "and CPUs with native bf16 (AVX-512 BF16 or AMX); SN sigma, BN, the losses and the Hamburger's "
           "decomposition stay fp32"),
      boolean("channels_last", &T::channels_last,
              "NHWC weights and images (gan/models/memory_format.h; faster on CPU and CUDA; results equal up to summation order)"),
      word("folded_convs", &T::folded_convs, kFoldWords,
           "G's upsample + 3x3 conv and D's 3x3 conv + pool each as one folded convolution (layers/fold_taps.h; "
           "fewer MACs; results equal up to summation order), and on GPUs the shortcuts too (D's pool + 1x1 conv "
           "as one convolution, G's upsampling inside its residual add): auto where measured faster, true "
           "everywhere (GPUs and AMX CPUs included), false as written"),
      word("upsample_conv", &T::upsample_conv, kUpsampleConvWords,
           "where G's upsample + 3x3 convolution folds: `subpixel` runs four 2x2 phase convolutions as one and "
           "interleaves their outputs (a copy of the activation, forward and backward), `transposed` one stride-2 "
           "transposed convolution with the folded 4x4 kernel, which writes the interleaved output itself "
           "(layers/upsample_conv.h; equal up to summation order; not yet measured on a GPU)"),
      word("fused_cbn_relu", &T::fused_cbn_relu, kFuseWords,
           "G's conditional batch norm and the ReLU after it as one operation (layers/cbn_relu.h; 6 bytes moved per "
           "element instead of about 48 under bf16; results equal up to rounding): auto on CUDA (its kernels, measured "
           "15% faster on an H200), true everywhere (the CPU runs its ATen form, moving no fewer bytes), false as "
           "written; data parallel's synchronised statistics take the plain form"),
      word("bias_kernel", &T::bias_kernel, kFuseWords,
           "convolution biases added by one vectorised pass of hamgan's (layers/channel_bias.h; in fp32, rounded once) "
           "instead of ATen's broadcast add, with D's ReLU after its first convolution in the same pass: auto on CUDA "
           "(its kernel), true everywhere (the CPU runs its ATen form), false as written"),
      word("upsample_add_kernel", &T::upsample_add_kernel, kFuseWords,
           "G's residual add of its upsampled shortcut (with the folded shortcuts) and that add's gradient, the sum "
           "of each 2x2 block, by one pass each of hamgan's (layers/upsample_conv.h) instead of ATen's broadcast "
           "and strided reduction: auto on CUDA (its kernels), true everywhere (other devices run the ATen form), "
           "false: the ATen form"),
      word("tf32", &T::tf32, kTf32Words,
           "on CUDA: fp32 matrix products (the Hamburger's decomposition, which stays fp32 under autocast) on the "
           "tensor cores in TF32, 10 mantissa bits against bf16's 7; auto: on when `amp` is, true: also in fp32 "
           "training, false: full fp32 (cuDNN's convolutions take TF32 in fp32 either way, PyTorch's default)"),
      boolean("cudnn_benchmark", &T::cudnn_benchmark,
              "on CUDA: cuDNN times its convolution algorithms once for each shape and keeps the fastest (the step's "
              "shapes are fixed); false: its heuristic choice"),
      word("device", &T::device, kDeviceWords,
           "where training runs; `auto`: CUDA when a GPU is visible; each rank on a machine gets its own GPU (with "
           "`dist_backend: gloo`, ranks may share them)"),
      word("dist_backend", &T::dist_backend, kDistBackendWords,
           "data parallel: how the ranks sum (gan/train/distributed.h); `auto`: NCCL on CUDA where this LibTorch has "
           "it, else Gloo; on the CPU shared memory where every rank is on this machine, else Gloo; `shm`: shared "
           "memory, an error where it cannot be had; `gloo`: Gloo over TCP, also on CUDA, where local ranks may share "
           "GPUs (local rank r on cuda:(r % GPUs); Gloo copies each all-reduce through the host); `nccl`: NCCL, one "
           "GPU per local rank"),
      integer("log_every", &T::log_every, 1, "iterations between progress lines and `metrics.jsonl` records"),
      integer("sample_every", &T::sample_every, 0, "iterations between sample grids in `samples/` (0: none)"),
      boolean("tensorboard", &T::tensorboard,
              "also write TensorBoard event files (losses, scores, sample grids) to `tensorboard/` of the run, rank 0 only"),
      integer("checkpoint_every", &T::checkpoint_every, 0,
              "iterations between checkpoints (the last iteration always leaves one)"),
      integer("keep_checkpoints", &T::keep_checkpoints, 1, "the newest K checkpoints that verify are kept; older ones are deleted"),
      real("time_limit_minutes", &T::time_limit_minutes, at_least(0),
           "0: none; else checkpoint and stop after this many minutes of this invocation"),
      word("lr_decay", &T::lr_decay, kLrDecayWords,
           "`linear`: both learning rates fall to 0 from `lr_decay_from` of the budget (iterations, or the time limit "
           "if that ends first) to its end (gan/train/lr_schedule.h)"),
      real("lr_decay_from", &T::lr_decay_from, closed(0, 0.999), "fraction of the budget where the linear decay starts"),
      boolean("sync_bn", &T::sync_bn, "data parallel: G's batch statistics over the global batch of all ranks (default: per rank)"),
      boolean("reuse_fake", &T::reuse_fake,
              "G's step reuses the D step's fakes (one G forward per iteration, the DCGAN example's step; G's "
              "activations stay alive through D's step, with accumulate every micro-batch's) instead of drawing new "
              "ones (BigGAN's step)")
          .also("only with `n_dis: 1`"),
      parsed<T, DiffAugPolicy>("diffaug", &T::diffaug, "a comma list of color, translation, cutout; \"\": none",
                               "DiffAugment (Zhao et al. 2020; the paper's policy is color,translation,cutout): its "
                               "transforms on every image D sees, real and fake (gan/train/diff_augment.h)",
                               diffaug_text, diffaug_policy),
      real("lecam_weight", &T::lecam_weight, closed(0, 1e6),
           "lambda of the LeCam term in D's loss (Tseng et al. 2021; 0.3 in the paper's BigGAN runs; gan/train/lecam.h); 0: off"),
      real("lecam_decay", &T::lecam_decay, closed(0, 0.999999), "EMA decay of LeCam's anchors (the paper's 0.99)"),
      real("r1_gamma", &T::r1_gamma, closed(0, 1e6),
           "gamma of R1 (Mescheder et al. 2018), the gradient penalty gamma/2 E[|grad_x D(x)|^2] on real images (as D "
           "sees them: after DiffAugment) in D's loss (gan/train/r1.h); 0: off"),
      integer("r1_every", &T::r1_every, 1, 1000000,
              "R1 on every N-th D step only, multiplied by N (StyleGAN2's lazy regularisation; its interval is 16)"),
      real("r2_gamma", &T::r2_gamma, closed(0, 1e6),
           "gamma of R2, the same penalty gamma/2 E[|grad_x D(x)|^2] on generated images (as D sees them) in D's loss "
           "(gan/train/r2.h); with `loss: rpgan` and `r1_gamma` equal to it, R3GAN's objective (Huang et al. 2024); "
           "0: off"),
      integer("r2_every", &T::r2_every, 1, 1000000, "R2 on every N-th D step only, multiplied by N (as `r1_every`)"),
      parsed<T, AdaPolicy>("ada", &T::ada, "letters of bgc; \"\": none",
                           "adaptive discriminator augmentation (Karras et al. 2020, StyleGAN2-ADA; gan/train/ada.h): "
                           "its pipeline's groups, b (x-flip, 90-degree rotations, integer translation), g (scaling, "
                           "rotation, anisotropic scaling, fractional translation) and c (brightness, contrast, luma "
                           "flip, hue, saturation), each transform applied with probability p to every image D sees, "
                           "real and fake; the paper's choice is bgc",
                           ada_text, ada_policy),
      real("ada_p", &T::ada_p, closed(0, 1),
           "ADA's augmentation probability p at the start of a new run (resumed runs keep their checkpoint's), and "
           "throughout when `ada_target` is 0"),
      real("ada_target", &T::ada_target, closed(0, 1),
           "ADA's overfitting heuristic r_t = E[sign(D(real))] is held near this by moving p (the paper's 0.6); 0: p "
           "stays `ada_p`"),
      integer("ada_interval", &T::ada_interval, 1, 1000000, "D steps between adjustments of p (the paper's 4)"),
      real("ada_kimg", &T::ada_kimg, open_closed(0, 1e9),
           "thousands of real images D sees while p may move from 0 to 1 (the paper's 500; far smaller for runs of a "
           "few hundred thousand images)"),
      real("mode_seeking", &T::mode_seeking, closed(0, 1e6),
           "lambda of the mode-seeking term in G's loss (Mao et al. 2019; 1 in the paper; gan/train/mode_seeking.h): "
           "the inverse ratio of image to latent distance over pairs of fakes of one label; 0: off"),
      integer("class_group", &T::class_group, 1, 1 << 20,
              "every micro-batch D sees is runs of this many images of one class, real (the loader's order, "
              "gan/data/class_runs.h) and fake (one label drawn per run); with `discriminator.mbstd_group` a divisor "
              "of it, the minibatch standard deviation measures variety within a class; 1: labels drawn per image")
          .also("a divisor of batch_size / accumulate")
          .on_resume(OnResume::Keep),
      text("init_from", &T::init_from, "a path; \"\": none",
           "a hamgan checkpoint of another run to start from (gan/train/init_from.h): G, D and the EMA G by tensor "
           "name; class tensors of another `model.n_classes` re-initialised and named in the log; the iteration "
           "count starts at 0; a resumed run ignores it"),
      boolean("init_optimizer", &T::init_optimizer, "with `init_from`: also take both Adam states (step and moments)"),
      boolean("init_ada_p", &T::init_ada_p,
              "with `init_from` and `ada`: ADA's p starts at the checkpoint's instead of `ada_p` (the source run "
              "trained on the same or similar data)"),
      // D's optimizer holds the unfrozen parameters only: another count would not fit its state.
      integer("freeze_d", &T::freeze_d, 0,
              "FreezeD (Mo et al. 2020, \"Freeze the Discriminator\"): D's first K blocks keep their weights (no "
              "gradient, not in D's optimizer)")
          .also("at most the number of D's blocks at `model.resolution`")
          .on_resume(OnResume::Keep),
  });
  return table;
}

const KeyTable<DataConfig>& data_keys() {
  using D = DataConfig;
  static const KeyTable<D> table(OnResume::Change, {
      word("format", &D::format, kDataFormatWords, "the training data's kind; `auto`: detected from what is at `path`"),
      text("path", &D::path, "a path",
           "the training data: a Fashion-MNIST or CIFAR-10 directory, an image folder (one directory per class) or "
           "a file of `hamgan prepare`"),
      integer("limit", &D::limit, 0, int64_t(1) << 40,
              "train on this many of the source's images: with labels, class-balanced (classes take turns in a fixed "
              "shuffled order, so a smaller limit's images are among a larger one's), else a fixed uniform sample; "
              "`hamgan dgap` reads the same images; 0: all")
          .on_resume(OnResume::Keep),
  });
  return table;
}

const KeyTable<EvalConfig>& eval_keys() {
  using E = EvalConfig;
  static const KeyTable<E> table(OnResume::Change, {
      integer("every", &E::every, 0,
              "score the EMA G every N iterations (and at the end) as `fid --run` would, into `scores.csv` "
              "(gan/eval/train_scorer.h); 0: off"),
      integer("n", &E::n, 2, kMaxFidSamples, "samples, and real images of the reference, per score"),
      text("features", &E::features, "a path; \"\": Inception",
           "the feature network to score in, as `fid --features`: a domain classifier (`hamgan classifier train`) "
           "or a DINOv2 backbone (FD_DINOv2)"),
      text("real", &E::real, "a path; \"\": `data.path`", "the reference (.npz, image directory or data source)"),
      parsed<E, std::string>(
          "metrics", &E::metrics, "a comma list of metric names (as `fid --metrics`)", "what each score computes",
          [](const std::string& s) { return s; },
          [](ConfigNode& n, const std::string& key, const std::string& text) {
            try {  // the registry's names (metrics/metric.h), in its order
              return metrics::parse_metric_list(text).text();
            } catch (const Error& e) {
              n.fail_key(key, e.what());
            }
          }),
      choice("best_metric", &E::best_metric, metrics::table_metric_names,
             "ranks the kept best checkpoints (each metric's better direction: its registry entry)"),
      integer("keep_best", &E::keep_best, 1, 1000,
              "best checkpoints kept as `checkpoints/best_ckpt_<iteration>.pt`, never pruned by `keep_checkpoints`"),
      text("inception", &E::inception, "a path; \"\": `--inception` or `$HAMGAN_INCEPTION`", "pytorch-fid's Inception weights"),
      integer("fid_n", &E::fid_n, 2, kMaxFidSamples,
              "default sample count of `fid --checkpoint` and `fid --run` (each sample's 2048 features stay in memory)"),
  });
  return table;
}

}  // namespace hamgan
