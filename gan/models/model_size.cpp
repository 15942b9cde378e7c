#include "gan/models/model_size.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "core/machine_memory.h"
#include "gan/config/arch.h"

namespace hamgan {

namespace {

// Residual blocks' two 3x3 convolutions and their 1x1 shortcut where widths or sizes change
// (BigGAN's GBlock and DBlock), in doubles: the products of a config's widths overflow int64
// long before the check refuses them.
double block_weights(const std::vector<BlockArch>& arch) {
  double n = 0;
  for (const BlockArch& b : arch) {
    const double in = static_cast<double>(b.in), out = static_cast<double>(b.out);
    n += 9 * in * out + 9 * out * out + (b.in != b.out || b.resample ? in * out : 0);
  }
  return n;
}

// G: its blocks, the linear layer from z (or its first chunk) to the 4x4 input, each block's two
// conditional BNs (a gain and a bias per channel from the class, or from the shared embedding
// and a z chunk) and the output convolution.
double g_floor(const Config& cfg) {
  const GeneratorConfig& g = cfg.generator;
  const auto arch = generator_arch(cfg.model.resolution, g.ch, g.ch_mult);
  const double blocks = static_cast<double>(arch.size());
  double z_in = static_cast<double>(g.z_dim), cond = static_cast<double>(cfg.model.n_classes);
  if (g.shared_dim > 0) {
    const double chunk = g.hier ? std::floor(static_cast<double>(g.z_dim) / (blocks + 1)) : 0;
    if (g.hier) z_in = chunk;
    cond = static_cast<double>(g.shared_dim) + chunk;
  }
  double n = block_weights(arch) + z_in * 16 * static_cast<double>(arch.front().in) +
             9 * static_cast<double>(arch.back().out) * static_cast<double>(cfg.model.image_channels);
  for (const BlockArch& b : arch) n += 2 * cond * static_cast<double>(b.in + b.out);
  return n;
}

double d_floor(const Config& cfg) {
  return block_weights(discriminator_arch(cfg.model.resolution, cfg.discriminator.ch, cfg.model.image_channels,
                                          cfg.discriminator.ch_mult));
}

std::string gb(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g GB", bytes / 1e9);
  return b;
}

}  // namespace

int64_t generator_parameter_floor(const Config& cfg) { return static_cast<int64_t>(g_floor(cfg)); }
int64_t discriminator_parameter_floor(const Config& cfg) { return static_cast<int64_t>(d_floor(cfg)); }

void check_models_fit_memory(const Config& cfg, double copies, const std::string& what) {
  const double g = g_floor(cfg), d = d_floor(cfg), bytes = 4 * copies * (g + d);
  const int64_t have = physical_memory_bytes();
  if (have <= 0 || bytes <= static_cast<double>(have)) return;
  fail(cfg.source, ": generator.ch ", cfg.generator.ch, " and discriminator.ch ", cfg.discriminator.ch,
       (cfg.generator.ch_mult.empty() && cfg.discriminator.ch_mult.empty() ? "" : " (with their ch_mult)"),
       " make G and D of at least ", g, " and ", d, " parameters: ", what, " would need ", gb(bytes),
       ", more than this machine's ", gb(static_cast<double>(have)), " of memory; lower generator.ch and "
       "discriminator.ch (or ch_mult)");
}

}  // namespace hamgan
