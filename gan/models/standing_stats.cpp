#include "gan/models/standing_stats.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>

#include "core/error.h"
#include "core/rng_scope.h"

namespace hamgan {

void accumulate_standing_stats(GeneratorImpl& g, const StandingStatsOptions& o) {
  if (o.batches < 1 || o.batch_size < 2 || o.n_classes < 1)
    fail("standing statistics: expected batches >= 1, batch size >= 2 and classes >= 1, got ", o.batches,
         ", ", o.batch_size, ", ", o.n_classes);
  std::vector<torch::nn::BatchNorm2dImpl*> bns;
  for (const auto& m : g.modules(/*include_self=*/false))
    if (auto* bn = m->as<torch::nn::BatchNorm2dImpl>()) bns.push_back(bn);
  if (bns.empty()) return;
  const torch::Device device = bns.front()->running_mean.device();
  // A Hamburger in G draws its random bases from the default generators: here they run a
  // stream of their own, so statistics computed for a checkpoint (an eval point's included)
  // leave training's stream where it was.
  const RngScope rng(device, o.seed);
  torch::NoGradGuard no_grad;
  g.eval();
  std::vector<c10::optional<double>> momentum;
  for (auto* bn : bns) {
    momentum.push_back(bn->options.momentum());
    bn->reset_running_stats();
    bn->train();
  }
  at::Generator gen = at::detail::createCPUGenerator(o.seed);
  const auto to_device = [&](const torch::Tensor& t) {  // pinned: the copy does not wait for a GPU
    return device.is_cuda() ? t.pin_memory().to(device, /*non_blocking=*/true) : t;
  };
  PhaseProgress progress(o.say, "standing statistics of the EMA generator", o.batches,
                         "batches of " + std::to_string(o.batch_size));
  for (int64_t b = 0; b < o.batches; ++b) {
    const torch::Tensor z = torch::randn({o.batch_size, g.z_dim()}, gen);
    const torch::Tensor y = torch::randint(o.n_classes, {o.batch_size}, gen, torch::kLong);
    // Running stat = mean over the batches seen: factor 1 / (b + 1), given here. With momentum
    // unset LibTorch's BN computes the same from num_batches_tracked.item(), a host read per BN
    // layer per batch on a GPU (a device sync; tests/test_host_reads.cpp).
    for (auto* bn : bns) bn->options.momentum(1.0 / static_cast<double>(b + 1));
    g.forward(to_device(z), to_device(y));
    progress.add();
  }
  for (size_t i = 0; i < bns.size(); ++i) bns[i]->options.momentum(momentum[i]);
  g.eval();
}

StandingStatsOptions standing_stats_options(const Config& cfg) {
  StandingStatsOptions o;
  o.batches = cfg.train.ema_standing_batches;
  o.batch_size = std::max<int64_t>(2, cfg.train.batch_size / cfg.train.accumulate);
  o.n_classes = cfg.model.n_classes;
  o.seed = static_cast<uint64_t>(cfg.train.seed) ^ 0x57a2d1e6ULL;
  return o;
}

}  // namespace hamgan
