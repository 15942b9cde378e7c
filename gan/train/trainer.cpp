#include "gan/train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "core/compat.h"
#include "core/error.h"
#include "core/splitmix.h"
#include "gan/models/init.h"
#include "gan/models/memory_format.h"
#include "gan/train/amp.h"
#include "gan/train/distributed.h"
#include "gan/train/metrics_plot.h"
#include "gan/train/progress.h"
#include "gan/train/signals.h"
#include "io/png.h"
#include "metrics/labeled_grid.h"

namespace hamgan {

namespace fs = std::filesystem;

namespace {
void set_requires_grad(torch::nn::Module& m, bool on) {
  for (auto& p : m.parameters()) p.requires_grad_(on);
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
    ema_ = std::make_unique<Ema>(*g_, *g_ema_, cfg.train.ema_decay, cfg.train.ema_start);
  }
  stats_ = torch::zeros({kNumStats}, torch::TensorOptions(device_).dtype(torch::kFloat));
}

std::pair<torch::Tensor, torch::Tensor> Trainer::sample_zy(int64_t n) {
  if (latent_override_) {
    auto [z, y] = latent_override_(n);
    return {z.to(device_), y.to(device_)};
  }
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
      const auto add = [&](torch::Tensor& acc, const torch::Tensor& v) {
        const torch::Tensor t = v.detach() * scale;
        acc = acc.defined() ? acc + t : t;
      };
      add(d_real_loss, l.real);
      add(d_fake_loss, l.fake);
      add(d_real, o_real.mean());
      add(d_fake, o_fake.mean());
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
    const torch::Tensor t = l.detach() * scale;
    g_loss_sum = g_loss_sum.defined() ? g_loss_sum + t : t;
  }
  if (dp_) dp_->average_gradients(*g_);
  if (!compat::fused_adam_step(*opt_g_)) opt_g_->step();
  set_requires_grad(*d_, true);

  ++iteration_;
  if (ema_) ema_->update(iteration_);
  stats_ = torch::stack({d_real_loss, d_fake_loss, g_loss_sum, d_real, d_fake});
}

torch::Tensor Trainer::sample(const torch::Tensor& z, const torch::Tensor& y) {
  torch::NoGradGuard no_grad;
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
  c.g_ema = ema_ ? g_ema_.get() : nullptr;
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
  for (auto* o : {opt_g_.get(), opt_d_.get()}) {
    const double lr = o == opt_g_.get() ? cfg_.train.g_lr : cfg_.train.d_lr;
    for (auto& group : o->param_groups()) {
      auto& opts = static_cast<torch::optim::AdamOptions&>(group.options());
      opts.lr(lr).betas(std::make_tuple(cfg_.train.beta1, cfg_.train.beta2)).eps(cfg_.train.adam_eps);
    }
  }
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

TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source) {
  const bool lead = !opt.dp || opt.dp->rank() == 0;  // the rank that reports and writes files
  std::ostringstream quiet;
  std::ostream& out = !lead ? quiet : opt.out ? *opt.out : std::cout;
  if (opt.out_dir.empty()) fail("train: an output directory is needed");
  const fs::path dir(opt.out_dir), ckpt_dir = dir / "checkpoints", sample_dir = dir / "samples";
  fs::create_directories(ckpt_dir);
  fs::create_directories(sample_dir);

  torch::Device device = resolve_device(cfg.train.device);
  if (device.is_cuda() && opt.dp)  // one GPU per local worker
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(
                                             opt.dp->local_rank() % torch::cuda::device_count()));
  Trainer t(cfg, device);
  LoaderState start;
  int64_t last_ckpt_resumed = -1;
  std::ostringstream warnings;
  if (auto c = load_latest_checkpoint(ckpt_dir.string(), warnings, device)) {
    out << warnings.str();
    t.restore(*c);
    start = c->loader;
    last_ckpt_resumed = c->iteration;
    out << "resuming from " << c->path << " (iteration " << c->iteration << ")\n";
  } else {
    out << warnings.str();
    if (lead) std::ofstream(dir / "config.yaml") << to_yaml(cfg.resolved) << "\n";
  }
  out << "training on " << device.str() << (t.amp() ? " with bf16 autocast" : " in fp32")
      << ", batch " << cfg.train.batch_size
      << (cfg.train.accumulate > 1 ? " (" + std::to_string(cfg.train.accumulate) + " x " +
                                         std::to_string(t.micro_batch()) + ")"
                                   : std::string())
      << ", to iteration " << cfg.train.iterations << "; output in " << dir.string() << "\n";
  if (opt.dp) t.set_data_parallel(opt.dp);
  std::unique_ptr<BatchSource> source = make_source(t.micro_batch(), start);

  std::optional<StopOnSignal> signals;
  if (opt.handle_signals) signals.emplace();
  Progress progress(out, lead ? (dir / "metrics.jsonl").string() : "/dev/null");
  const auto [grid_z, grid_y] = grid_inputs(cfg);

  TrainResult result;
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto last_report = t0;
  int64_t last_report_it = t.iteration(), last_ckpt = last_ckpt_resumed;
  std::vector<torch::Tensor> pending;  // per-iteration stats not yet read back

  // Reads the pending stats back (the only host sync), stops on a NaN/Inf, reports.
  const auto flush = [&]() {
    if (pending.empty()) return;
    const torch::Tensor s = torch::stack(pending).cpu();
    const int64_t n = s.size(0), first = t.iteration() - n + 1;
    pending.clear();
    const auto a = s.accessor<float, 2>();
    static const char* names[kNumStats] = {"D loss (real)", "D loss (fake)", "G loss",
                                           "mean D(x)", "mean D(G(z))"};
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < kNumStats; ++j)
        if (!std::isfinite(a[i][j])) {
          progress.finish();
          fail("training diverged: ", names[j], " is ", a[i][j], " at iteration ", first + i,
               "; stopped without checkpointing it (the last good checkpoint is kept in ",
               ckpt_dir.string(), ")");
        }
    if (opt.record_history)
      for (int64_t i = 0; i < n; ++i) {
        IterStats st;
        for (int64_t j = 0; j < kNumStats; ++j) st[j] = a[i][j];
        result.history.push_back(st);
      }
    const torch::Tensor mean = s.mean(0);
    const auto now = clock::now();
    const double dt = std::chrono::duration<double>(now - last_report).count();
    ProgressRecord r;
    r.iteration = t.iteration();
    r.total = cfg.train.iterations;
    r.wall_s = std::chrono::duration<double>(now - t0).count();
    r.it_s = dt > 0 ? (t.iteration() - last_report_it) / dt : 0;
    r.img_s = r.it_s * cfg.train.batch_size * cfg.train.n_dis;  // real images seen by D
    r.d_loss_real = mean[kDLossReal].item<double>();
    r.d_loss_fake = mean[kDLossFake].item<double>();
    r.g_loss = mean[kGLoss].item<double>();
    r.d_real = mean[kDReal].item<double>();
    r.d_fake = mean[kDFake].item<double>();
    r.g_lr = cfg.train.g_lr;
    r.d_lr = cfg.train.d_lr;
    if (cfg.train.time_limit_minutes > 0)
      r.time_left_s = std::max(0.0, cfg.train.time_limit_minutes * 60 - r.wall_s);
    progress.report(r);
    if (lead) redraw_metrics_plot(dir.string(), [&](const std::string& m) { progress.message(m); });
    last_report = now;
    last_report_it = t.iteration();
  };
  const auto write_samples = [&]() {
    if (!lead) return;
    const torch::Tensor x = t.sample(grid_z, grid_y);
    char name[64];
    std::snprintf(name, sizeof name, "samples_%09lld.png", static_cast<long long>(t.iteration()));
    write_png((sample_dir / name).string(), labeled_grid(x, grid_y, 8));
  };
  const auto checkpoint = [&]() {
    last_ckpt = t.iteration();
    if (!lead) return;
    t.save(checkpoint_path(ckpt_dir.string(), t.iteration()), source->state());
    prune_checkpoints(ckpt_dir.string(), cfg.train.keep_checkpoints);
  };

  while (t.iteration() < cfg.train.iterations) {
    t.step(*source);
    pending.push_back(t.stats());
    if (opt.after_step) opt.after_step(t);
    const int64_t it = t.iteration();
    const bool ckpt_now = cfg.train.checkpoint_every > 0 && it % cfg.train.checkpoint_every == 0;
    bool time_up =
        cfg.train.time_limit_minutes > 0 &&
        std::chrono::duration<double>(clock::now() - t0).count() > cfg.train.time_limit_minutes * 60;
    int sig = signals ? StopOnSignal::requested() : 0;
    if (opt.dp) {  // every rank must stop at the same iteration, or all-reduces hang
      torch::Tensor stop = torch::tensor({double(sig), time_up ? 1.0 : 0.0});
      opt.dp->all_reduce_sum(stop);
      sig = stop[0].item<double>() > 0 ? std::max(sig, 1) : 0;
      time_up = stop[1].item<double>() > 0;
    }
    if (it % cfg.train.log_every == 0 || ckpt_now || time_up || sig) flush();
    if (cfg.train.sample_every > 0 && it % cfg.train.sample_every == 0) write_samples();
    if (ckpt_now) checkpoint();
    if (sig || time_up) {
      result.outcome = sig ? TrainOutcome::Interrupted : TrainOutcome::TimeLimit;
      break;
    }
  }
  flush();
  progress.finish();
  if (last_ckpt != t.iteration()) {
    if (cfg.train.sample_every > 0 && t.iteration() % cfg.train.sample_every != 0) write_samples();
    checkpoint();
  }
  result.iteration = t.iteration();
  const std::string where = checkpoint_path(ckpt_dir.string(), t.iteration());
  if (result.outcome == TrainOutcome::Interrupted)
    out << "stopped by signal " << StopOnSignal::requested() << " after iteration "
        << t.iteration() << "; checkpoint " << where << " (run again to resume)\n";
  else if (result.outcome == TrainOutcome::TimeLimit)
    out << "time limit of " << cfg.train.time_limit_minutes << " min reached at iteration "
        << t.iteration() << "; checkpoint " << where << "\n";
  else
    out << "finished at iteration " << t.iteration() << "; checkpoint " << where << "\n";
  return result;
}

}  // namespace hamgan
