// A checkpoint's generator ready for sampling: EMA G by default (G with ema = false, or when
// the checkpoint has no EMA copy, which is reported once), eval mode, inference mode,
// batched. Latents come from latent_for(seed, class, k), and a Hamburger's random initial D of
// image (class, k) from a CPU generator seeded by (seed, class, k, module), so images depend on
// neither the batch nor the device.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <ostream>
#include <vector>

#include "gan/checkpoint/checkpoint.h"
#include "gan/models/generator.h"
#include "gan/sample/plan.h"

namespace hamgan::sample {

struct SamplerOptions {
  uint64_t seed = 0;
  double truncation = 0;  // <= 0: none
  bool ema = true;
  int64_t batch = 64;
  torch::Device device = torch::kCPU;
  // > 0: the EMA G's BN standing statistics are re-estimated over this many batches (as
  // BigGAN-PyTorch's sample.py --num_standing_accumulations); 0: the checkpoint's.
  int64_t standing_batches = 0;
};

class Sampler {
 public:
  Sampler(const CheckpointData& ckpt, const SamplerOptions& opt, std::ostream& warn);
  // G(z, y) for the given latents [B, z_dim] and labels [B] -> [B, C, R, R] in [-1, 1], CPU float.
  // An output that is not finite (a diverged generator) is an error naming the checkpoint: such
  // images would be black PNGs and scores of nothing.
  torch::Tensor generate(const torch::Tensor& z, const torch::Tensor& y) const;
  // The images of `items` (latents from the seed), in order; one forward per `batch` items.
  torch::Tensor generate(const std::vector<SampleItem>& items) const;
  // Calls fn(first item index, images) for consecutive batches of `items`.
  void for_each_batch(const std::vector<SampleItem>& items,
                      const std::function<void(size_t, const torch::Tensor&)>& fn) const;
  torch::Tensor latent(int64_t cls, int64_t k) const;  // [z_dim]

  int64_t z_dim() const { return z_dim_; }
  int64_t n_classes() const { return n_classes_; }
  bool uses_ema() const { return uses_ema_; }
  const SamplerOptions& options() const { return opt_; }

 private:
  // Each random-init Hamburger of G gets, for its next forward, the D of items [first, end).
  void set_item_bases(const std::vector<SampleItem>& items, size_t first, size_t end) const;

  SamplerOptions opt_;
  std::string path_;  // the checkpoint's, for errors
  mutable Generator g_{nullptr};
  int64_t z_dim_ = 0, n_classes_ = 0;
  bool uses_ema_ = false;
};

// [-1, 1] images -> H x W x C uint8 pixels as written to PNG: round((x + 1) * 127.5).
torch::Tensor to_uint8(const torch::Tensor& images);  // [B, C, H, W] -> [B, C, H, W] uint8

}  // namespace hamgan::sample
