#include "gan/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <optional>

#include "core/error.h"
#include "core/rng_scope.h"
#include "core/splitmix.h"
#include "gan/models/init.h"
#include "gan/models/memory_format.h"
#include "gan/models/standing_stats.h"
#include "gan/train/amp.h"
#include "gan/train/distributed.h"
#include "gan/train/train_hooks.h"

namespace hamgan {

namespace {
// A checkpoint's name for rank r's state of generator `name` (rank 0's keeps the plain name).
std::string rank_rng_name(const std::string& name, int rank) { return name + "_rank" + std::to_string(rank); }

void set_requires_grad(torch::nn::Module& m, bool on) {
  for (auto& p : m.parameters()) p.requires_grad_(on);
}
// Adam (Kingma & Ba 2015, Algorithm 1) with any beta1 in (-1, 1): LibTorch's constructor refuses
// beta1 < 0, its step's equations do not (1 - beta1^t stays positive), so the betas are set on
// the groups after construction, where a resume sets them too.
void set_betas(torch::optim::Adam& opt, double beta1, const TrainConfig& t) {
  for (auto& group : opt.param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).betas(std::make_tuple(beta1, t.beta2)).eps(t.adam_eps);
}
std::unique_ptr<torch::optim::Adam> adam(std::vector<torch::Tensor> params, double lr, double beta1,
                                         const TrainConfig& t) {
  auto opt = std::make_unique<torch::optim::Adam>(
      std::move(params), torch::optim::AdamOptions(lr).betas(std::make_tuple(std::max(beta1, 0.0), t.beta2)));
  set_betas(*opt, beta1, t);
  return opt;
}
}  // namespace

Trainer::Trainer(const Config& cfg, torch::Device device)
    : cfg_(cfg),
      device_(device),
      amp_(amp_enabled(cfg.train.amp, device)),
      kernels_(train_kernels(cfg.train, device, amp_)),
      loss_(cfg.train.loss),
      rng_(at::detail::createCPUGenerator(static_cast<uint64_t>(cfg.train.seed))) {
  // Initial weights (and SN u/v) come from the global RNG, seeded for reproducibility.
  torch::manual_seed(static_cast<uint64_t>(cfg.train.seed));
  g_ = Generator(cfg.model, cfg.generator);
  d_ = Discriminator(cfg.model, cfg.discriminator);
  init_weights(*g_, cfg.model.init);
  init_weights(*d_, cfg.model.init);
  // FreezeD: before D's optimizer, which leaves them out. Frozen fresh weights still estimate
  // their spectral norm; frozen fine-tuned ones keep the checkpoint's estimate.
  d_->freeze_blocks(cfg.train.freeze_d, /*estimate_sigma=*/cfg.train.init_from.empty());
  g_->to(device_);
  d_->to(device_);
  if (cfg.train.channels_last) to_channels_last(*g_), to_channels_last(*d_);
  g_->train();
  d_->train();
  opt_g_ = adam(g_->parameters(), cfg.train.g_lr, cfg.train.beta1, cfg.train);
  opt_d_ = adam(d_->trainable_parameters(), cfg.train.d_lr, cfg.train.d_beta1, cfg.train);
  if (cfg.train.ema) {
    g_ema_ = Generator(cfg.model, cfg.generator);
    g_ema_->to(device_);
    if (cfg.train.channels_last) to_channels_last(*g_ema_);
    g_ema_->eval();
    set_requires_grad(*g_ema_, false);
    ema_ = std::make_unique<Ema>(*g_, *g_ema_, cfg.train.ema_decay, cfg.train.ema_start,
                                 cfg.train.ema_rampup);
  }
  features_ = create_step_features(cfg, device_);
  const auto n_stats = static_cast<int64_t>(stat_names().size());
  stats_ = torch::zeros({n_stats}, torch::TensorOptions(device_).dtype(torch::kFloat));
}

torch::Tensor draw_fake_labels(int64_t n, int64_t classes, int64_t run, at::Generator& gen) {
  if (run < 1 || n % run != 0) fail("fake labels: ", n, " in runs of train.class_group ", run, ": expected a multiple");
  torch::Tensor y = torch::randint(classes, {n / run}, gen, torch::kLong);
  return run > 1 ? y.repeat_interleave(run) : y;
}

std::pair<torch::Tensor, torch::Tensor> Trainer::sample_zy(int64_t n) {
  if (scripted_zy_) return scripted_zy_(n);
  // Drawn on the CPU from one generator: the same stream on every device, checkpointable.
  torch::Tensor z = torch::randn({n, g_->z_dim()}, rng_);
  torch::Tensor y = draw_fake_labels(n, cfg_.model.n_classes, cfg_.train.class_group, rng_);
  return {z.to(device_, /*non_blocking=*/true), y.to(device_, /*non_blocking=*/true)};
}

void script_latents(Trainer& t, std::function<std::pair<torch::Tensor, torch::Tensor>(int64_t)> draw) {
  t.scripted_zy_ = std::move(draw);
}

void Trainer::set_lr_scale(double scale) {
  lr_scale_ = scale;
  for (auto* o : {opt_g_.get(), opt_d_.get()}) {
    const double lr = (o == opt_g_.get() ? cfg_.train.g_lr : cfg_.train.d_lr) * scale;
    for (auto& group : o->param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
  }
}

void Trainer::ensure_standing_stats() {
  if (!ema_ || cfg_.train.ema_standing_batches == 0 || standing_at_ == iteration_) return;
  StandingStatsOptions o = standing_stats_options(cfg_);
  o.say = say_;
  accumulate_standing_stats(*g_ema_, o);
  standing_at_ = iteration_;
}

torch::Tensor Trainer::sample(const torch::Tensor& z, const torch::Tensor& y) {
  const TrainKernelScope kernels(kernels_);
  torch::NoGradGuard no_grad;
  // A grid is no training step: a Hamburger's random bases for it come from a stream of its
  // own (the same for every grid of the run), so how often grids are drawn cannot change training.
  const RngScope rng(device_, static_cast<uint64_t>(cfg_.train.seed) ^ 0x73616d706c65ull);  // "sample"
  ensure_standing_stats();
  if (ema_) return g_ema_->forward(z.to(device_), y.to(device_));
  g_->eval();
  torch::Tensor x = g_->forward(z.to(device_), y.to(device_));
  g_->train();
  return x;
}

void Trainer::save(const std::string& path, const LoaderState& loader, bool standing) {
  save_checkpoint(path, checkpoint(loader, standing));
}

CheckpointWrite Trainer::checkpoint(const LoaderState& loader, bool standing) {
  const TrainKernelScope kernels(kernels_);  // the standing statistics run G
  CheckpointWrite c;
  c.iteration = iteration_;
  c.config_yaml = to_yaml(cfg_.resolved);
  c.g = g_.get();
  c.d = d_.get();
  if (standing) ensure_standing_stats();
  c.g_ema = ema_ ? g_ema_.get() : nullptr;
  // Flagged only when the EMA G's BN holds them; without, whoever loads it computes them.
  c.ema_standing = standing_at_ == iteration_ ? cfg_.train.ema_standing_batches : 0;
  c.opt_g = opt_g_.get();
  c.opt_d = opt_d_.get();
  c.loader = loader;
  each_feature(features_, [&](const StepFeature& f) {
    for (auto& [name, state] : f.state()) c.train_state.emplace_back(name, state);
  });
  c.rng = rng_states();
  for (const auto& r : rank_rng_) c.rng.push_back(r);
  return c;
}

std::vector<std::pair<std::string, torch::Tensor>> Trainer::rng_states() const {
  std::vector<std::pair<std::string, torch::Tensor>> r = {
      {"sample", rng_.get_state()}, {"cpu_default", at::detail::getDefaultCPUGenerator().get_state()}};
  // On CUDA the context modules draw their random initial bases (Hamburger NMF/VQ/CD) from
  // the GPU's default generator; without its state a resumed run would draw other bases.
  if (device_.is_cuda())
    r.emplace_back("cuda_default", at::globalContext().defaultGenerator(device_).get_state());
  return r;
}

// Each generator state is a byte tensor of one size on every rank: slot r of a [world, bytes]
// sum holds rank r's.
void Trainer::share_rank_rng() {
  rank_rng_.clear();
  if (!dp_ || dp_->world_size() < 2) return;
  for (const auto& [name, state] : rng_states()) {
    const int64_t n = state.numel();
    torch::Tensor all = torch::zeros({dp_->world_size(), n}, torch::kInt32);
    all[dp_->rank()].copy_(state.to(torch::kInt32));
    dp_->all_reduce_sum(all);  // on the host: NCCL's path copies it back
    for (int r = 1; r < dp_->world_size(); ++r)
      rank_rng_.emplace_back(rank_rng_name(name, r), all[r].to(torch::kUInt8).contiguous());
  }
}


void Trainer::restore(const CheckpointData& c) {
  check_resume_compatible(c.config, cfg_, c.path);
  c.load_module("g", *g_);
  c.load_module("d", *d_);
  // train.ema may change on resume: turned on, the average starts from G's weights (as at
  // ema_start), so a run resumed once without EMA can have it again.
  if (ema_) c.load_module(c.has_ema ? "g_ema" : "g", *g_ema_);
  c.load_optimizer("opt_g", *opt_g_);
  c.load_optimizer("opt_d", *opt_d_);
  // Learning rates and betas come from the current config (safe changes are allowed).
  set_betas(*opt_g_, cfg_.train.beta1, cfg_.train);
  set_betas(*opt_d_, cfg_.train.d_beta1, cfg_.train);
  set_lr_scale(lr_scale_);
  set_rng_states(c.rng_state("sample"), c.rng_state("cpu_default"), c.find_rng_state("cuda_default"));
  // Ranks > 0 take theirs in set_data_parallel, which knows the rank.
  restored_rng_.clear();
  for (int r = 1; c.find_rng_state(rank_rng_name("sample", r)); ++r)
    for (const char* name : {"sample", "cpu_default", "cuda_default"})
      if (const auto t = c.find_rng_state(rank_rng_name(name, r))) restored_rng_.emplace_back(rank_rng_name(name, r), *t);
  each_feature(features_, [&](StepFeature& f) { f.restore(c); });
  iteration_ = c.iteration;
  standing_at_ = -1;
}

void Trainer::carry_feature_state(const CheckpointData& c, std::ostream& log) {
  each_feature(features_, [&](StepFeature& f) { f.init_from(c, log); });
}

void Trainer::set_rng_states(const torch::Tensor& sample, const torch::Tensor& cpu,
                             const std::optional<torch::Tensor>& cuda) {
  rng_.set_state(sample);
  at::Generator global = at::detail::getDefaultCPUGenerator();  // a handle, shared state
  global.set_state(cpu);
  // Portable both ways: a CUDA run's checkpoint resumes on the CPU (its GPU state is not
  // needed there), a CPU run's on CUDA (the GPU generator keeps its seed from the config).
  if (cuda && device_.is_cuda()) {
    at::Generator g = at::globalContext().defaultGenerator(device_);  // a handle, shared state
    g.set_state(*cuda);
  }
}

void Trainer::reseed_rank_stream() {
  rng_.set_current_seed(splitmix64(static_cast<uint64_t>(cfg_.train.seed) ^
                                   (static_cast<uint64_t>(dp_->rank()) << 32)) +
                        static_cast<uint64_t>(iteration_));
}

void Trainer::set_data_parallel(DataParallel* dp) {
  dp_ = dp;
  g_->set_batch_reducer(nullptr);
  if (!dp_) return;
  dp_->broadcast(*g_);
  dp_->broadcast(*d_);
  if (ema_) dp_->broadcast(*g_ema_);
  // Synchronised BN: G's training-mode statistics over the global batch (world 1 or off:
  // untouched, per-rank statistics).
  if (cfg_.train.sync_bn && dp_->world_size() > 1) g_->set_batch_reducer(dp_);
  // Distinct fakes per rank; rank 0 keeps the stream a 1-process resume continues. A rank r > 0
  // resumed from a checkpoint that holds its streams (share_rank_rng) draws on from them, as an
  // unbroken run would; from an older checkpoint, or at another world size, it starts anew.
  const int r = dp_->rank();
  const auto saved = [&](const std::string& name) -> std::optional<torch::Tensor> {
    for (const auto& [n, state] : restored_rng_)
      if (n == rank_rng_name(name, r)) return state;
    return std::nullopt;
  };
  if (r == 0) return;
  const auto sample = saved("sample"), cpu = saved("cpu_default");
  if (!sample || !cpu) return reseed_rank_stream();
  set_rng_states(*sample, *cpu, saved("cuda_default"));
}

}  // namespace hamgan
