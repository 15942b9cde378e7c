#include "gan/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "core/compat.h"
#include "core/error.h"
#include "core/rng_scope.h"
#include "core/splitmix.h"
#include "gan/models/init.h"
#include "gan/models/memory_format.h"
#include "gan/models/standing_stats.h"
#include "gan/train/amp.h"
#include "gan/train/distributed.h"
#include "gan/train/init_from.h"
#include "gan/train/lr_schedule.h"
#include "gan/train/reporter.h"
#include "gan/train/run_dir.h"
#include "gan/train/stop_policy.h"
#include "io/tensorboard_log.h"
#include "gan/train/train_hooks.h"
#include "layers/cbn_relu.h"
#include "layers/channel_bias.h"
#include "layers/fold_taps.h"
#include "layers/upsample_conv.h"

namespace hamgan {

namespace fs = std::filesystem;

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
      loss_(cfg.train.loss),
      rng_(at::detail::createCPUGenerator(static_cast<uint64_t>(cfg.train.seed))) {
  // Initial weights (and SN u/v) come from the global RNG, seeded for reproducibility.
  torch::manual_seed(static_cast<uint64_t>(cfg.train.seed));
  set_folded_convs(cfg.train.folded_convs);
  set_fused_cbn_relu(cfg.train.fused_cbn_relu);
  set_bias_kernel(cfg.train.bias_kernel);
  set_upsample_add_kernel(cfg.train.upsample_add_kernel);
  if (device.is_cuda()) at::globalContext().setAllowTF32CuBLAS(tf32_enabled(cfg.train.tf32, device, amp_));
  // The step's shapes never change, so cuDNN's one-off timing of each convolution's algorithms
  // (torch.backends.cudnn.benchmark) pays from the second step on; its heuristic pick may not.
  if (device.is_cuda()) at::globalContext().setBenchmarkCuDNN(cfg.train.cudnn_benchmark);
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

namespace {

// "key.path: checkpoint A, now B" for every leaf where a and b differ.
void differences(const YAML::Node& a, const YAML::Node& b, const std::string& path, std::vector<std::string>& out) {
  if (a.IsMap() && b.IsMap()) {
    std::set<std::string> keys;
    for (const auto& kv : a) keys.insert(kv.first.as<std::string>());
    for (const auto& kv : b) keys.insert(kv.first.as<std::string>());
    // A key on one side only (another context type's options) reads as null, never as
    // yaml-cpp's invalid node, which throws when asked anything.
    const auto at = [](const YAML::Node& m, const std::string& k) { return m[k] ? YAML::Node(m[k]) : YAML::Node(); };
    for (const auto& k : keys) differences(at(a, k), at(b, k), path + "." + k, out);
    return;
  }
  const std::string x = a.IsDefined() && !a.IsNull() ? to_yaml(a) : "(unset)";
  const std::string y = b.IsDefined() && !b.IsNull() ? to_yaml(b) : "(unset)";
  if (x != y) out.push_back("  " + path.substr(1) + ": checkpoint " + x + ", now " + y);
}

// The resolved value at a dotted key path as YAML text, "(unset)" where there is none.
std::string value_text(const YAML::Node& resolved, const std::string& path) {
  YAML::Node n = resolved;  // a handle; the lookups below are const
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '.');) {
    const YAML::Node& c = n;
    if (!c.IsMap() || !c[part]) return "(unset)";
    n.reset(c[part]);
  }
  return to_yaml(n);
}

}  // namespace

// The keys whose rows say OnResume::Model, section by section; a context block is compared as
// a whole mapping (another type has other keys).
std::vector<std::string> model_differences(const Config& stored, const Config& now) {
  std::vector<std::pair<std::string, std::vector<std::string>>> sections;
  for (const KeyInfo& k : config_keys()) {
    const auto dot = k.path.find('.');
    if (k.resume != OnResume::Model || k.path.find('.', dot + 1) != std::string::npos) continue;
    if (sections.empty() || sections.back().first != k.path.substr(0, dot)) sections.push_back({k.path.substr(0, dot), {}});
    sections.back().second.push_back(k.path.substr(dot + 1));
  }
  std::vector<std::string> diff;
  for (const auto& [section, names] : sections) {
    const YAML::Node sa = stored.resolved[section], sb = now.resolved[section];
    YAML::Node a(YAML::NodeType::Map), b(YAML::NodeType::Map);
    for (const auto& n : names) {
      if (sa.IsMap() && sa[n]) a[n] = sa[n];
      if (sb.IsMap() && sb[n]) b[n] = sb[n];
    }
    differences(a, b, "." + section, diff);
  }
  return diff;
}

void check_resume_compatible(const Config& stored, const Config& now, const std::string& what,
                             const std::string& run_config) {
  const std::vector<std::string> diff = model_differences(stored, now);
  if (!diff.empty()) {
    std::string lines;
    for (const auto& d : diff) lines += "\n" + d;
    fail(what, ": the model this config builds differs from the checkpoint's in ", diff.size(),
         diff.size() == 1 ? " key:" : " keys:", lines, "\nResume with the settings the run started with (",
         run_config.empty() ? std::string("the run's config.yaml") : "-c " + run_config,
         " and the same overrides) or train into a new --out.");
  }
  // The keys the optimizers' state depends on (rows: OnResume::Keep; train.freeze_d).
  for (const KeyInfo& k : config_keys()) {
    if (k.resume != OnResume::Keep) continue;
    const std::string was = value_text(stored.resolved, k.path), is = value_text(now.resolved, k.path);
    if (was != is)
      fail(what, ": ", k.path, " is ", is, " but the run was trained with ", was, "; resume with ", k.path, "=", was,
           " or fine-tune into a new --out with train.init_from");
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

namespace {
bool every(int64_t interval, int64_t iteration) { return interval > 0 && iteration % interval == 0; }

// Gloo's own words ("Connection reset by peer") do not say that a rank is gone or what is kept.
[[noreturn]] void fail_lost_ranks(const DataParallel& dp, int64_t iteration, const RunDir& dir,
                                  const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  fail("rank ", dp.rank(), " of ", dp.world_size(), " lost the other ranks during iteration ", iteration + 1,
       " (one of them died or was killed?): ", c10 ? c10->what_without_backtrace() : e.what(), "; ",
       dir.last_checkpoint() >= 0 ? "the last checkpoint, " + dir.checkpoint_path(dir.last_checkpoint()) +
                                        ", is kept: run again to resume from it"
                                  : std::string("no checkpoint was written yet"));
}
}  // namespace

TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source) {
  return train(cfg, opt, make_source, TrainHooks{});
}

// One call: the run directory (lock, checkpoints, grids), the reporter and the stop policy
// around the loop. Only the lead rank writes and prints; every rank keeps the same schedule
// (and the same collectives).
TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source,
                  const TrainHooks& hooks) {
  const TrainConfig& tc = cfg.train;
  // Adam's states come from train.init_from's checkpoint: without one there is nothing to take.
  if (tc.init_optimizer && tc.init_from.empty())
    fail(cfg.source, ": train.init_optimizer=true takes Adam's states from train.init_from's checkpoint, but "
         "train.init_from is not set; set train.init_from=CHECKPOINT, or leave train.init_optimizer false");
  const bool lead = !opt.dp || opt.dp->rank() == 0;
  RunDir dir(opt.out_dir, lead);
  Reporter report(cfg, opt.out, lead, opt.dp ? opt.dp->world_size() : 1, hooks.history);
  const torch::Device device =
      opt.device ? *opt.device
                 : train_device(word_of(tc.device, kDeviceWords), opt.dp ? opt.dp->local_rank() : -1, -1,
                                tc.dist_backend);
  StopPolicy stop(tc.time_limit_minutes, opt.handle_signals, opt.dp, /*agree_every_step=*/!device.is_cuda());
  // train.init_from is read before a new run's config.yaml is written: a bad file leaves nothing.
  std::optional<CheckpointData> init;
  const auto new_run = [&dir] {
    const fs::path ckpts = fs::path(dir.path()) / "checkpoints";
    return !fs::exists(ckpts) || checkpoint_files(ckpts.string()).empty();
  };
  if (!tc.init_from.empty() && new_run()) init = load_checkpoint(tc.init_from);
  // The checkpoint before the models: a config that would change them fails at once.
  const std::optional<CheckpointData> resumed = dir.resume(cfg, device, report.out(), opt.class_names);
  if (resumed) check_resume_compatible(resumed->config, cfg, resumed->path, dir.path() + "/config.yaml");
  Trainer t(cfg, device);
  if (resumed) t.restore(*resumed);
  if (resumed && cfg.train.ema && !resumed->has_ema)
    report.out() << "note: " << resumed->path << " has no EMA generator (train.ema was off): the EMA G starts "
                 << "from G's weights\n";
  if (resumed && !tc.init_from.empty())
    report.out() << "train.init_from " << tc.init_from << " is not used: this run resumes from its own checkpoint "
                 << resumed->path << "\n";
  if (!resumed && !tc.init_from.empty()) {
    if (!init) init = load_checkpoint(tc.init_from);  // only damaged checkpoints were there
    log_init_from(report.out(), *init, cfg.model.n_classes, init_from_checkpoint(t, *init, tc.init_optimizer),
                  tc.init_optimizer);
  }
  report.banner(t, resumed, dir);
  if (opt.dp) t.set_data_parallel(opt.dp);
  const PhaseProgress::Say say = [&report](const std::string& w) { report.message(w); };
  t.set_say(say);
  dir.set_say(say);
  const std::unique_ptr<BatchSource> source = make_source(t.micro_batch(), resumed ? resumed->loader : LoaderState{});
  stop.start();
  report.start(t, dir);
  // The scorer's rows go to the loop's own TensorBoard file, beside train/<key>.
  TensorBoardLog* const view = report.tensorboard().enabled() ? &report.tensorboard() : nullptr;
  const EvalRanks ranks = eval_ranks(opt.dp);  // every rank samples its share of a score

  TrainOutcome outcome = TrainOutcome::Finished;
  const int64_t first_it = t.iteration() + 1;  // reported at once: a slow step is not silence
  int64_t last_eval = -1;
  try {
    while (t.iteration() < tc.iterations) {
      t.set_lr_scale(lr_scale(tc, budget_progress(tc, t.iteration(), stop.elapsed_s())));
      t.step(*source);
      report.add(t);
      if (hooks.after_step) hooks.after_step(t);
      const int64_t it = t.iteration();
      const bool eval_point = opt.eval && every(cfg.eval.every, it);
      const bool checkpoint_point = every(tc.checkpoint_every, it) || eval_point;
      // Every point that writes a checkpoint reports first: the NaN check keeps a diverged model
      // out of the checkpoints (and its last good one from pruning).
      const bool report_point = it == first_it || every(tc.log_every, it) || checkpoint_point;
      const std::optional<TrainOutcome> stopping = stop.check(report_point);
      if (report_point || stopping) report.report(t, stop, dir);
      if (every(tc.sample_every, it)) report.tensorboard().image(it, "samples", dir.save_grid(t));
      if (checkpoint_point) dir.save_checkpoint(t, source->state(), tc.keep_checkpoints);
      if (eval_point) opt.eval(it, dir.checkpoint_path(it), say, view, ranks);
      if (eval_point) last_eval = it;
      if (stopping) {
        outcome = *stopping;
        break;
      }
    }
  } catch (const std::exception& e) {  // a collective failed: another rank died (kill -9, OOM)
    if (!opt.dp || dynamic_cast<const Error*>(&e)) throw;
    fail_lost_ranks(*opt.dp, t.iteration(), dir, e);
  }
  report.report(t, stop, dir);
  // The last iteration always leaves a checkpoint, and a grid unless a stop was requested: a
  // signal is answered within the step and the checkpoint write (standing statistics and a
  // 128 px grid take seconds more), the EMA G's standing statistics left to the loader.
  const bool interrupted = outcome == TrainOutcome::Interrupted;
  if (!interrupted && t.iteration() >= first_it && tc.sample_every > 0 && !every(tc.sample_every, t.iteration()))
    report.tensorboard().image(t.iteration(), "samples", dir.save_grid(t));  // a checkpoint point or not
  if (dir.last_checkpoint() != t.iteration())
    dir.save_checkpoint(t, source->state(), tc.keep_checkpoints, /*standing=*/!interrupted);
  // The end is scored too (the best checkpoint may be the last one), unless a stop was requested.
  if (opt.eval && cfg.eval.every > 0 && last_eval != t.iteration() && !interrupted)
    opt.eval(t.iteration(), dir.checkpoint_path(t.iteration()), say, view, ranks);
  report.finish(outcome, t, dir);
  return {outcome, t.iteration()};
}

}  // namespace hamgan
