// Trainer::step: BigGAN's algorithm, its D and G micro-batches, and the statistics it reports
// (the Trainer's construction, checkpoints and the run around the step: trainer.cpp).
#include "core/compat.h"
#include "core/error.h"
#include "gan/train/distributed.h"
#include "gan/train/trainer.h"

namespace hamgan {

torch::Tensor Trainer::augment(const torch::Tensor& x) {
  torch::Tensor t = x;
  each_feature(features_, [&](StepFeature& f) { t = f.augment(t, rng_); });
  return t;
}

// BigGAN's step (Brock et al. 2019, Appendix; SAGAN's TTUR): n_dis D steps, then one G step,
// then the EMA of G's weights. The step features (gan/train/step_feature.h) add their terms at
// the points named there.
void Trainer::step(BatchSource& real) {
  const TrainKernelScope kernels(kernels_);
  const int64_t k = cfg_.train.accumulate;
  const double scale = 1.0 / static_cast<double>(k);
  std::vector<Kept> kept;  // the last D step's, per micro-batch
  DStepStats d;

  // Discriminator: n_dis steps, each over k micro-batches.
  for (int64_t s = 0; s < cfg_.train.n_dis; ++s) {
    opt_d_->zero_grad();
    each_feature(features_, [&](StepFeature& f) { f.begin_d_step(iteration_ * cfg_.train.n_dis + s); });
    d = DStepStats{};
    kept.clear();
    for (int64_t a = 0; a < k; ++a) d_micro_batch(real, scale, kept, d);
    if (dp_) dp_->average_gradients(*d_);
    each_feature(features_, [&](StepFeature& f) { f.end_d_step(d.real, d.fake, dp_); });
    phase("D optimizer");
    if (!compat::fused_adam_step(*opt_d_)) opt_d_->step();  // one kernel on CUDA
  }

  // Generator: D's weights are constants here (BigGAN's toggle_grad; FreezeD's frozen blocks
  // are constants throughout).
  d_->set_trainable(false);
  opt_g_->zero_grad();
  torch::Tensor g_loss_mean;
  for (int64_t a = 0; a < k; ++a) accumulate_scaled(g_loss_mean, g_micro_batch(kept[a], scale), scale);
  if (dp_) dp_->average_gradients(*g_);
  phase("G optimizer");
  if (!compat::fused_adam_step(*opt_g_)) opt_g_->step();
  d_->set_trainable(true);  // FreezeD's frozen blocks stay off

  ++iteration_;
  phase("EMA");
  if (ema_) ema_->update(iteration_);
  stats_ = collect_stats(d, g_loss_mean);
  phase(nullptr);
}

// Real and fake go through D as one concatenated batch: D has no batch statistics, so this
// equals two passes (and SN runs one power iteration per D step, as in BigGAN's G_D).
void Trainer::d_micro_batch(BatchSource& real, double scale, std::vector<Kept>& kept, DStepStats& st) {
  const int64_t mb = micro_batch();
  phase("real batch and latents");
  const Batch b = real.next();
  if (b.images.size(0) != mb) fail("batch source: expected batches of ", mb, " images, got ", b.images.size(0));
  torch::Tensor x = b.images.to(device_, /*non_blocking=*/true);
  if (cfg_.train.channels_last) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
  bool real_grad = false, fake_grad = false;
  each_feature(features_, [&](StepFeature& f) {
    real_grad = real_grad || f.wants_real_grad();
    fake_grad = fake_grad || f.wants_fake_grad();
  });
  if (real_grad) x = x.detach().requires_grad_(true);
  const torch::Tensor y = b.labels.to(device_, /*non_blocking=*/true);
  auto [z, y_fake] = sample_zy(mb);
  torch::Tensor out;
  DMicroBatch m;
  {
    compat::Autocast autocast(amp_, device_.type());
    torch::Tensor fake;
    phase("G forward (D step)");
    const torch::Tensor real_kept = g_loss_needs_real(loss_) ? x.detach() : torch::Tensor();
    if (cfg_.train.reuse_fake) {
      fake = g_->forward(z, y_fake);
      kept.push_back({fake, z, y_fake, real_kept, y});
      fake = fake.detach();
    } else {
      torch::NoGradGuard no_grad;
      fake = g_->forward(z, y_fake);
      kept.push_back({{}, {}, {}, real_kept, y});
    }
    fake = fake.to(x.scalar_type());
    if (fake_grad) fake = fake.detach().requires_grad_(true);
    phase("D forward (D step)");
    out = d_->forward(augment(torch::cat({x, fake})), torch::cat({y, y_fake}));
    m.x_fake = fake;
  }
  out = out.to(torch::kFloat);
  m.x_real = x, m.o_real = out.narrow(0, 0, mb), m.o_fake = out.narrow(0, mb, mb), m.scale = scale;
  const DLoss l = d_loss(loss_, m.o_real, m.o_fake);
  torch::Tensor loss = l.real + l.fake;
  each_feature(features_, [&](StepFeature& f) {
    if (const torch::Tensor t = f.d_loss(m); t.defined()) loss = loss + t;
  });
  phase("D backward (D step)");
  (loss * scale).backward();
  accumulate_scaled(st.loss_real, l.real, scale);
  accumulate_scaled(st.loss_fake, l.fake, scale);
  accumulate_scaled(st.real, m.o_real.mean(), scale);
  accumulate_scaled(st.fake, m.o_fake.mean(), scale);
}

torch::Tensor Trainer::g_micro_batch(const Kept& kept, double scale) {
  torch::Tensor fake, z, y_fake, out, out_real;
  {
    compat::Autocast autocast(amp_, device_.type());
    phase("G forward (G step)");
    if (cfg_.train.reuse_fake) {
      fake = kept.fake;
      z = kept.z;
      y_fake = kept.y;
    } else {
      std::tie(z, y_fake) = sample_zy(micro_batch());
      fake = g_->forward(z, y_fake);
    }
    phase("D forward (G step)");
    out = d_->forward(augment(fake), y_fake);
    if (kept.real.defined()) {
      // The D step's reals through the updated D, constants for G. Eval mode: the spectral
      // norms keep the u, v of the fakes' forward just run, so both halves of a pair see one D.
      torch::NoGradGuard no_grad;
      d_->train(false);
      out_real = d_->forward(augment(kept.real), kept.real_y);
      d_->train(true);
    }
  }
  out = out.to(torch::kFloat);
  if (out_real.defined()) out_real = out_real.to(torch::kFloat);
  const torch::Tensor l = g_loss(loss_, out, out_real);
  torch::Tensor loss = l;
  const GMicroBatch m{z, y_fake, fake, out, scale};
  each_feature(features_, [&](StepFeature& f) {
    if (const torch::Tensor t = f.g_loss(m); t.defined()) loss = loss + t;
  });
  phase("D and G backward (G step)");
  (loss * scale).backward();
  return l;
}

torch::Tensor Trainer::collect_stats(const DStepStats& d, const torch::Tensor& g_loss) const {
  std::vector<torch::Tensor> s = {d.loss_real, d.loss_fake, g_loss, d.real, d.fake};
  const auto& registry = step_feature_registry();
  for (size_t i = 0; i < registry.size(); ++i) {
    const size_t n = registry[i].stats.size();
    const std::vector<torch::Tensor> v = features_[i] ? features_[i]->stats() : std::vector<torch::Tensor>(n);
    if (v.size() != n) fail("step feature ", registry[i].name, ": ", v.size(), " statistics for ", n, " names");
    for (const torch::Tensor& t : v) s.push_back(t.defined() ? t : torch::zeros({}, d.real.options()));
  }
  return torch::stack(s);
}

}  // namespace hamgan
