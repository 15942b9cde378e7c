#include "support/tiny_checkpoint.h"

#include <filesystem>

#include "gan/checkpoint/checkpoint.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/models/init.h"

namespace hamgan::test {

std::string tiny_checkpoint_yaml(const std::string& eval) {
  std::string y =
      "model: {resolution: 32, n_classes: 3, image_channels: 1}\n"
      "generator: {ch: 4, z_dim: 8}\n"
      "discriminator: {ch: 4}\n"
      "train: {batch_size: 4, device: cpu, ema_standing_batches: 0}\n";
  if (!eval.empty()) y += "eval: {" + eval + "}\n";
  return y;
}

void write_tiny_checkpoint(const std::string& path, int64_t iteration, bool ema, uint64_t seed,
                           const std::string& yaml, bool raw_yaml) {
  const Config cfg = parse_config(yaml, "tiny checkpoint config");
  torch::manual_seed(seed);
  Generator g(cfg.model, cfg.generator);
  init_weights(*g, cfg.model.init);
  torch::manual_seed(seed + 1000);
  Generator g_ema(cfg.model, cfg.generator);
  init_weights(*g_ema, cfg.model.init);
  Discriminator d(cfg.model, cfg.discriminator);
  torch::optim::Adam og(g->parameters()), od(d->parameters());
  CheckpointWrite w;
  w.iteration = iteration;
  w.config_yaml = raw_yaml ? yaml : to_yaml(cfg.resolved);
  w.g = g.get();
  w.d = d.get();
  w.g_ema = ema ? g_ema.get() : nullptr;
  w.opt_g = &og;
  w.opt_d = &od;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  save_checkpoint(path, w);
}

std::string tiny_checkpoint_in(const std::string& dir) {
  const std::string p = dir + "/ckpt_000000010.pt";
  write_tiny_checkpoint(p, 10, true, 1, tiny_checkpoint_yaml());
  return p;
}

}  // namespace hamgan::test
