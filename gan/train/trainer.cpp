#include "gan/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "core/compat.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "core/splitmix.h"
#include "gan/models/init.h"
#include "gan/models/memory_format.h"
#include "gan/models/standing_stats.h"
#include "gan/train/amp.h"
#include "gan/train/distributed.h"
#include "gan/train/lr_schedule.h"
#include "gan/train/metrics_plot.h"
#include "gan/train/progress.h"
#include "gan/train/signals.h"
#include "gan/train/train_hooks.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "io/png.h"
#include "metrics/labeled_grid.h"

namespace hamgan {

namespace fs = std::filesystem;

namespace {
void set_requires_grad(torch::nn::Module& m, bool on) {
  for (auto& p : m.parameters()) p.requires_grad_(on);
}
// acc += v * scale over the micro-batches of a step (v detached; acc undefined at first).
void accumulate(torch::Tensor& acc, const torch::Tensor& v, double scale) {
  const torch::Tensor t = v.detach() * scale;
  acc = acc.defined() ? acc + t : t;
}
torch::optim::AdamOptions adam(double lr, const TrainConfig& t) {
  return torch::optim::AdamOptions(lr).betas(std::make_tuple(t.beta1, t.beta2)).eps(t.adam_eps);
}
}  // namespace

Trainer::Trainer(const Config& cfg, torch::Device device)
    : cfg_(cfg),
      device_(device),
      amp_(amp_enabled(cfg.train.amp, device)),
      loss_(parse_gan_loss(cfg.train.loss)),
      rng_(at::detail::createCPUGenerator(static_cast<uint64_t>(cfg.train.seed))) {
  // Initial weights (and SN u/v) come from the global RNG, seeded for reproducibility.
  torch::manual_seed(static_cast<uint64_t>(cfg.train.seed));
  g_ = Generator(cfg.model, cfg.generator);
  d_ = Discriminator(cfg.model, cfg.discriminator);
  init_weights(*g_, cfg.model.init);
  init_weights(*d_, cfg.model.init);
  g_->to(device_);
  d_->to(device_);
  if (cfg.train.channels_last) to_channels_last(*g_), to_channels_last(*d_);
  g_->train();
  d_->train();
  opt_g_ = std::make_unique<torch::optim::Adam>(g_->parameters(), adam(cfg.train.g_lr, cfg.train));
  opt_d_ = std::make_unique<torch::optim::Adam>(d_->parameters(), adam(cfg.train.d_lr, cfg.train));
  if (cfg.train.ema) {
    g_ema_ = Generator(cfg.model, cfg.generator);
    g_ema_->to(device_);
    if (cfg.train.channels_last) to_channels_last(*g_ema_);
    g_ema_->eval();
    set_requires_grad(*g_ema_, false);
    ema_ = std::make_unique<Ema>(*g_, *g_ema_, cfg.train.ema_decay, cfg.train.ema_start,
                                 cfg.train.ema_rampup);
  }
  stats_ = torch::zeros({kNumStats}, torch::TensorOptions(device_).dtype(torch::kFloat));
}

std::pair<torch::Tensor, torch::Tensor> Trainer::sample_zy(int64_t n) {
  // Drawn on the CPU from one generator: the same stream on every device, checkpointable.
  torch::Tensor z = torch::randn({n, g_->z_dim()}, rng_);
  torch::Tensor y = torch::randint(cfg_.model.n_classes, {n}, rng_, torch::kLong);
  return {z.to(device_, /*non_blocking=*/true), y.to(device_, /*non_blocking=*/true)};
}

void Trainer::step(BatchSource& real) {
  const int64_t k = cfg_.train.accumulate, mb = micro_batch();
  const double scale = 1.0 / static_cast<double>(k);
  torch::Tensor d_real_loss, d_fake_loss, d_real, d_fake, g_loss_sum;

  // Discriminator: n_dis steps, each over k micro-batches. Real and fake go through D as
  // one concatenated batch: D has no batch statistics, so this equals two passes (and SN
  // runs one power iteration per D step, as in BigGAN's G_D).
  for (int64_t s = 0; s < cfg_.train.n_dis; ++s) {
    opt_d_->zero_grad();
    d_real_loss = d_fake_loss = d_real = d_fake = torch::Tensor();
    for (int64_t a = 0; a < k; ++a) {
      const Batch b = real.next();
      if (b.images.size(0) != mb)
        fail("batch source: expected batches of ", mb, " images, got ", b.images.size(0));
      torch::Tensor x = b.images.to(device_, /*non_blocking=*/true);
      if (cfg_.train.channels_last) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
      const torch::Tensor y = b.labels.to(device_, /*non_blocking=*/true);
      auto [z, y_fake] = sample_zy(mb);
      torch::Tensor out;
      {
        compat::Autocast autocast(amp_, device_.type());
        torch::Tensor fake;
        {
          torch::NoGradGuard no_grad;
          fake = g_->forward(z, y_fake);
        }
        out = d_->forward(torch::cat({x, fake.to(x.scalar_type())}), torch::cat({y, y_fake}));
      }
      out = out.to(torch::kFloat);
      const torch::Tensor o_real = out.narrow(0, 0, mb), o_fake = out.narrow(0, mb, mb);
      const DLoss l = d_loss(loss_, o_real, o_fake);
      ((l.real + l.fake) * scale).backward();
      accumulate(d_real_loss, l.real, scale);
      accumulate(d_fake_loss, l.fake, scale);
      accumulate(d_real, o_real.mean(), scale);
      accumulate(d_fake, o_fake.mean(), scale);
    }
    if (dp_) dp_->average_gradients(*d_);
    if (!compat::fused_adam_step(*opt_d_)) opt_d_->step();  // one kernel on CUDA
  }

  // Generator: D's weights are constants here (BigGAN's toggle_grad).
  set_requires_grad(*d_, false);
  opt_g_->zero_grad();
  for (int64_t a = 0; a < k; ++a) {
    auto [z, y_fake] = sample_zy(mb);
    torch::Tensor out;
    {
      compat::Autocast autocast(amp_, device_.type());
      out = d_->forward(g_->forward(z, y_fake), y_fake);
    }
    const torch::Tensor l = g_loss(loss_, out.to(torch::kFloat));
    (l * scale).backward();
    accumulate(g_loss_sum, l, scale);
  }
  if (dp_) dp_->average_gradients(*g_);
  if (!compat::fused_adam_step(*opt_g_)) opt_g_->step();
  set_requires_grad(*d_, true);

  ++iteration_;
  if (ema_) ema_->update(iteration_);
  stats_ = torch::stack({d_real_loss, d_fake_loss, g_loss_sum, d_real, d_fake});
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
  accumulate_standing_stats(*g_ema_, standing_stats_options(cfg_));
  standing_at_ = iteration_;
}

torch::Tensor Trainer::sample(const torch::Tensor& z, const torch::Tensor& y) {
  torch::NoGradGuard no_grad;
  ensure_standing_stats();
  if (ema_) return g_ema_->forward(z.to(device_), y.to(device_));
  g_->eval();
  torch::Tensor x = g_->forward(z.to(device_), y.to(device_));
  g_->train();
  return x;
}

void Trainer::save(const std::string& path, const LoaderState& loader) {
  save_checkpoint(path, checkpoint(loader));
}

CheckpointWrite Trainer::checkpoint(const LoaderState& loader) {
  CheckpointWrite c;
  c.iteration = iteration_;
  c.config_yaml = to_yaml(cfg_.resolved);
  c.g = g_.get();
  c.d = d_.get();
  ensure_standing_stats();
  c.g_ema = ema_ ? g_ema_.get() : nullptr;
  c.ema_standing = cfg_.train.ema_standing_batches;
  c.opt_g = opt_g_.get();
  c.opt_d = opt_d_.get();
  c.loader = loader;
  c.rng = {{"sample", rng_.get_state()},
           {"cpu_default", at::detail::getDefaultCPUGenerator().get_state()}};
  // On CUDA the context modules draw their random initial bases (Hamburger NMF/VQ/CD) from
  // the GPU's default generator; without its state a resumed run would draw other bases.
  if (device_.is_cuda())
    c.rng.emplace_back("cuda_default", at::globalContext().defaultGenerator(device_).get_state());
  return c;
}

void check_resume_compatible(const Config& stored, const Config& now, const std::string& what) {
  for (const char* section : {"model", "generator", "discriminator"}) {
    const std::string a = to_yaml(stored.resolved[section]), b = to_yaml(now.resolved[section]);
    if (a != b)
      fail(what, ": the config's '", section, "' section differs from the checkpoint's, which "
           "would change the model; resume with the stored settings or use a new --out.\n"
           "checkpoint:\n", a, "\nnow:\n", b);
  }
}

void Trainer::restore(const CheckpointData& c) {
  check_resume_compatible(c.config, cfg_, c.path);
  if (cfg_.train.ema && !c.has_ema)
    fail(c.path, ": train.ema is on but the checkpoint has no EMA generator");
  c.load_module("g", *g_);
  c.load_module("d", *d_);
  if (ema_) c.load_module("g_ema", *g_ema_);
  c.load_optimizer("opt_g", *opt_g_);
  c.load_optimizer("opt_d", *opt_d_);
  // Learning rates and betas come from the current config (safe changes are allowed).
  for (auto* o : {opt_g_.get(), opt_d_.get()})
    for (auto& group : o->param_groups())
      static_cast<torch::optim::AdamOptions&>(group.options())
          .betas(std::make_tuple(cfg_.train.beta1, cfg_.train.beta2))
          .eps(cfg_.train.adam_eps);
  set_lr_scale(lr_scale_);
  rng_.set_state(c.rng_state("sample"));
  at::Generator global = at::detail::getDefaultCPUGenerator();  // a handle, shared state
  global.set_state(c.rng_state("cpu_default"));
  // Portable both ways: a CUDA run's checkpoint resumes on the CPU (its GPU state is not
  // needed there), a CPU run's on CUDA (the GPU generator keeps its seed from the config).
  if (const auto cuda = c.find_rng_state("cuda_default"); cuda && device_.is_cuda()) {
    at::Generator g = at::globalContext().defaultGenerator(device_);  // a handle, shared state
    g.set_state(*cuda);
  }
  iteration_ = c.iteration;
  standing_at_ = -1;
}

namespace {

// Rows: every class, or 10 evenly spaced ones when there are more; 8 fixed z per row,
// the same z down each column so rows differ only in the class.
std::pair<torch::Tensor, torch::Tensor> grid_inputs(const Config& cfg) {
  const int64_t rows = std::min<int64_t>(cfg.model.n_classes, 10), cols = 8;
  auto gen = at::detail::createCPUGenerator(static_cast<uint64_t>(cfg.train.seed) + 0x5eed);
  const torch::Tensor z = torch::randn({cols, cfg.generator.z_dim}, gen);
  torch::Tensor y = torch::empty({rows * cols}, torch::kLong);
  for (int64_t r = 0; r < rows; ++r)
    y.narrow(0, r * cols, cols).fill_(r * cfg.model.n_classes / rows);
  return {z.repeat({rows, 1}), y};
}

}  // namespace

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
  // Distinct fakes per rank; rank 0 keeps the stream a 1-process resume continues.
  if (dp_->rank() > 0)
    rng_.set_current_seed(splitmix64(static_cast<uint64_t>(cfg_.train.seed) ^
                                     (static_cast<uint64_t>(dp_->rank()) << 32)) +
                          static_cast<uint64_t>(iteration_));
}

namespace {

bool every(int64_t interval, int64_t iteration) { return interval > 0 && iteration % interval == 0; }

// One call of train(): where it writes, what it reports, and when it stops. Only the lead
// rank writes files and prints; the others keep the same schedule (and the same collectives).
class Run {
 public:
  Run(const Config& cfg, const TrainOptions& opt, const TrainHooks& hooks)
      : cfg_(cfg), opt_(opt), hooks_(hooks), lead_(!opt.dp || opt.dp->rank() == 0),
        out_(!lead_ ? quiet_ : opt.out ? *opt.out : std::cout) {
    if (opt.out_dir.empty()) fail("train: an output directory is needed");
    fs::create_directories(ckpt_dir_);
    fs::create_directories(sample_dir_);
    // One writer per run directory; the lock lives as long as this Run.
    if (lead_) {
      lock_.emplace(dir_.string());
      remove_temporaries(ckpt_dir_.string());
    }
    device_ = resolve_device(cfg.train.device);
    if (device_.is_cuda() && opt.dp)  // one GPU per local worker
      device_ = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(
                                                opt.dp->local_rank() % torch::cuda::device_count()));
  }
  torch::Device device() const { return device_; }

  // Restores the newest valid checkpoint, or writes config.yaml for a new run; says which.
  LoaderState resume_or_start(Trainer& t) {
    LoaderState start;
    std::ostringstream warnings;
    auto c = load_latest_checkpoint(ckpt_dir_.string(), warnings, device_);
    out_ << warnings.str();
    if (c) {
      t.restore(*c);
      start = c->loader;
      last_ckpt_ = c->iteration;
      out_ << "resuming from " << c->path << " (iteration " << c->iteration << ")\n";
    } else if (lead_) {
      io::write_file_atomically((dir_ / "config.yaml").string(), to_yaml(cfg_.resolved) + "\n");
    }
    const auto& tc = cfg_.train;
    out_ << "training on " << device_.str() << (device_.is_cpu() ? " (" + cpu_isa_description() + ")" : std::string())
         << (t.amp() ? " with bf16 autocast" : " in fp32") << ", batch "
         << tc.batch_size << (world() > 1 ? " per rank x " + std::to_string(world()) + " ranks" : std::string())
         << (tc.accumulate > 1 ? " (" + std::to_string(tc.accumulate) + " x " + std::to_string(t.micro_batch()) + ")"
                               : std::string())
         << ", to iteration " << tc.iterations
         << (tc.lr_decay == "linear" ? "; lr linear to 0 from " + std::to_string(int(tc.lr_decay_from * 100 + 0.5)) +
                                           "% of the budget"
                                     : std::string())
         << "; output in " << dir_.string() << "\n";
    return start;
  }

  int world() const { return opt_.dp ? opt_.dp->world_size() : 1; }

  // From the first step on: signal handlers, metrics.jsonl, the clock.
  void begin(const Trainer& t) {
    if (opt_.handle_signals) signals_.emplace();
    progress_.emplace(out_, lead_ ? (dir_ / "metrics.jsonl").string() : "/dev/null");
    t0_ = last_report_ = clock::now();
    last_report_it_ = t.iteration();
  }

  void after_step(Trainer& t) {
    pending_.push_back(t.stats());
    if (hooks_.after_step) hooks_.after_step(t);
  }

  // Signal or time limit, agreed by every rank (they must stop at the same iteration, or
  // all-reduces hang).
  std::optional<TrainOutcome> should_stop() {
    elapsed_s_ = seconds_since(t0_);
    bool time_up = cfg_.train.time_limit_minutes > 0 && elapsed_s_ > cfg_.train.time_limit_minutes * 60;
    int sig = signals_ ? StopOnSignal::requested() : 0;
    if (opt_.dp) {  // the ranks' mean clock too: the lr schedule must agree across ranks
      torch::Tensor stop = torch::tensor({double(sig), time_up ? 1.0 : 0.0, elapsed_s_});
      opt_.dp->all_reduce_sum(stop);
      sig = stop[0].item<double>() > 0 ? std::max(sig, 1) : 0;
      time_up = stop[1].item<double>() > 0;
      elapsed_s_ = stop[2].item<double>() / world();
    }
    if (sig) return TrainOutcome::Interrupted;
    if (time_up) return TrainOutcome::TimeLimit;
    return std::nullopt;
  }

  // Seconds since begin() as of the last should_stop(), equal on every rank.
  double elapsed_s() const { return elapsed_s_; }

  // Reads the pending stats back (the only host sync), stops on a NaN/Inf, reports.
  void report(const Trainer& t) {
    if (pending_.empty()) return;
    const torch::Tensor s = torch::stack(pending_).cpu();
    const int64_t n = s.size(0), first = t.iteration() - n + 1;
    pending_.clear();
    const auto a = s.accessor<float, 2>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < kNumStats; ++j)
        if (!std::isfinite(a[i][j])) {
          progress_->finish();
          fail("training diverged: ", kStatNames[j].words, " is ", a[i][j], " at iteration ", first + i,
               "; stopped without checkpointing it (",
               last_ckpt_ >= 0 ? "the last good checkpoint, " +
                                     checkpoint_path(ckpt_dir_.string(), last_ckpt_) + ", is kept"
                               : std::string("no checkpoint was written"),
               ")");
        }
    if (hooks_.history)
      for (int64_t i = 0; i < n; ++i) {
        IterStats st;
        for (int64_t j = 0; j < kNumStats; ++j) st[j] = a[i][j];
        hooks_.history->push_back(st);
      }
    const torch::Tensor mean = s.mean(0).to(torch::kDouble);
    const auto now = clock::now();
    const double dt = std::chrono::duration<double>(now - last_report_).count();
    TrainMetrics m;
    m.iteration = t.iteration();
    m.total = cfg_.train.iterations;
    m.wall_s = std::chrono::duration<double>(now - t0_).count();
    m.it_s = dt > 0 ? (t.iteration() - last_report_it_) / dt : 0;
    m.img_s = m.it_s * cfg_.train.batch_size * world() * cfg_.train.n_dis;  // real images seen by D, all ranks
    for (int64_t j = 0; j < kNumStats; ++j) m.stat[j] = mean[j].item<double>();
    m.g_lr = cfg_.train.g_lr * t.lr_scale();
    m.d_lr = cfg_.train.d_lr * t.lr_scale();
    if (cfg_.train.time_limit_minutes > 0) m.time_left_s = std::max(0.0, cfg_.train.time_limit_minutes * 60 - m.wall_s);
    progress_->report(m);
    announce_speed(t, m.it_s);
    if (lead_) redraw_metrics_plot(dir_.string(), [this](const std::string& w) { progress_->message(w); });
    last_report_ = now;
    last_report_it_ = t.iteration();
  }

  // Once, at the second report, from its rate over the interval since the first (that one
  // holds the warm-up: allocations, oneDNN's kernel generation): the measured speed and when
  // the run will end, so a user on a slower CPU knows at once what the budget costs there.
  void announce_speed(const Trainer& t, double it_s) {
    if (++reports_ != 2 || it_s <= 0) return;
    const auto& tc = cfg_.train;
    const double to_end = (tc.iterations - t.iteration()) / it_s;
    const double limit_left = tc.time_limit_minutes > 0 ? tc.time_limit_minutes * 60 - elapsed_s_ : -1;
    std::ostringstream m;
    m.precision(3);
    m << "speed after warm-up: " << it_s << " it/s; iteration " << tc.iterations << " in about "
      << int(to_end / 60 + 0.5) << " min";
    if (limit_left >= 0 && limit_left < to_end)
      m << ", but train.time_limit_minutes (" << tc.time_limit_minutes << ") stops the run first, near iteration "
        << t.iteration() + int64_t(limit_left * it_s);
    progress_->message(m.str());
  }

  // The fixed-latent class grid, samples/samples_<iteration>.png.
  void sample_grid(Trainer& t) {
    if (!lead_) return;
    if (!grid_z_.defined()) std::tie(grid_z_, grid_y_) = grid_inputs(cfg_);
    char name[64];
    std::snprintf(name, sizeof name, "samples_%09lld.png", static_cast<long long>(t.iteration()));
    write_png((sample_dir_ / name).string(), labeled_grid(t.sample(grid_z_, grid_y_), grid_y_, 8));
  }

  void checkpoint(Trainer& t, const BatchSource& source) {
    last_ckpt_ = t.iteration();
    if (!lead_) return;
    t.save(checkpoint_path(ckpt_dir_.string(), t.iteration()), source.state());
    prune_checkpoints(ckpt_dir_.string(), cfg_.train.keep_checkpoints);
  }
  bool checkpointed(const Trainer& t) const { return last_ckpt_ == t.iteration(); }

  void finish(TrainOutcome outcome, const Trainer& t) {
    progress_->finish();
    const std::string where = checkpoint_path(ckpt_dir_.string(), t.iteration());
    if (outcome == TrainOutcome::Interrupted)
      out_ << "stopped by signal " << StopOnSignal::requested() << " after iteration " << t.iteration()
           << "; checkpoint " << where << " (run again to resume)\n";
    else if (outcome == TrainOutcome::TimeLimit)
      out_ << "time limit of " << cfg_.train.time_limit_minutes << " min reached at iteration " << t.iteration()
           << "; checkpoint " << where << "\n";
    else
      out_ << "finished at iteration " << t.iteration() << "; checkpoint " << where << "\n";
  }

 private:
  using clock = std::chrono::steady_clock;
  static double seconds_since(clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  }

  const Config& cfg_;
  const TrainOptions& opt_;
  const TrainHooks& hooks_;
  const bool lead_;  // the rank that reports and writes files
  std::ostringstream quiet_;
  std::ostream& out_;
  const fs::path dir_{opt_.out_dir}, ckpt_dir_{dir_ / "checkpoints"}, sample_dir_{dir_ / "samples"};
  torch::Device device_{torch::kCPU};
  std::optional<io::DirLock> lock_;
  std::optional<StopOnSignal> signals_;
  std::optional<Progress> progress_;
  torch::Tensor grid_z_, grid_y_;
  clock::time_point t0_, last_report_;
  int64_t last_report_it_ = 0, last_ckpt_ = -1, reports_ = 0;
  double elapsed_s_ = 0;
  std::vector<torch::Tensor> pending_;  // per-iteration stats not yet read back
};

}  // namespace

TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source) {
  return train(cfg, opt, make_source, TrainHooks{});
}

TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source,
                  const TrainHooks& hooks) {
  const TrainConfig& tc = cfg.train;
  Run run(cfg, opt, hooks);
  Trainer t(cfg, run.device());
  const LoaderState start = run.resume_or_start(t);
  if (opt.dp) t.set_data_parallel(opt.dp);
  const std::unique_ptr<BatchSource> source = make_source(t.micro_batch(), start);
  run.begin(t);

  TrainOutcome outcome = TrainOutcome::Finished;
  while (t.iteration() < tc.iterations) {
    t.set_lr_scale(lr_scale(tc, budget_progress(tc, t.iteration(), run.elapsed_s())));
    t.step(*source);
    run.after_step(t);
    const int64_t it = t.iteration();
    const std::optional<TrainOutcome> stop = run.should_stop();
    if (every(tc.log_every, it) || every(tc.checkpoint_every, it) || stop) run.report(t);
    if (every(tc.sample_every, it)) run.sample_grid(t);
    if (every(tc.checkpoint_every, it)) run.checkpoint(t, *source);
    if (stop) {
      outcome = *stop;
      break;
    }
  }
  run.report(t);
  if (!run.checkpointed(t)) {  // the last iteration always leaves a grid and a checkpoint
    if (tc.sample_every > 0 && !every(tc.sample_every, t.iteration())) run.sample_grid(t);
    run.checkpoint(t, *source);
  }
  run.finish(outcome, t);
  return {outcome, t.iteration()};
}

}  // namespace hamgan
