#include "gan/models/standing_stats.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>

#include "core/error.h"

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
  torch::NoGradGuard no_grad;
  g.eval();
  std::vector<c10::optional<double>> momentum;
  for (auto* bn : bns) {
    momentum.push_back(bn->options.momentum());
    bn->options.momentum(c10::nullopt);  // running stat = mean over the batches seen (1 / n)
    bn->reset_running_stats();
    bn->train();
  }
  at::Generator gen = at::detail::createCPUGenerator(o.seed);
  for (int64_t b = 0; b < o.batches; ++b) {
    const torch::Tensor z = torch::randn({o.batch_size, g.z_dim()}, gen);
    const torch::Tensor y = torch::randint(o.n_classes, {o.batch_size}, gen, torch::kLong);
    g.forward(z.to(device), y.to(device));
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
