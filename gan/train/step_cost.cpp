#include "gan/train/step_cost.h"

#include "core/mac_counter.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "core/compat.h"
#include "layers/kernel_choice.h"

namespace hamgan {

StepCost training_step_cost(const Config& cfg) {
  torch::NoGradGuard no_grad;
  // The forms `auto` picks for fp32 on a CPU: the folded main paths, the plain shortcuts (fewest MACs).
  const KernelScope folded(KernelChoice{});
  compat::NoAutocast fp32;
  Generator g(cfg.model, cfg.generator);
  Discriminator d(cfg.model, cfg.discriminator);
  const torch::Tensor y = torch::zeros({1}, torch::kLong);
  StepCost c;
  c.n_dis = cfg.train.n_dis;
  torch::Tensor x;
  {
    MacCounter mc;
    x = g->forward(torch::zeros({1, g->z_dim()}), y);
    c.g_forward = 2.0 * static_cast<double>(mc.macs());
  }
  MacCounter mc;
  d->forward(x, y);
  c.d_forward = 2.0 * static_cast<double>(mc.macs());
  return c;
}

}  // namespace hamgan
