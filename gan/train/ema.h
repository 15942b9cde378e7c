// Exponential moving average of G's weights (BigGAN-PyTorch utils.ema; Yazici et al.
// 2019): before `start` iterations the average is a copy, then w_ema <- d w_ema + (1-d) w.
// With `rampup` > 0 the decay warms up as in StyleGAN2-ADA (Karras et al. 2020,
// training_loop.py, ema_rampup): the average's half-life is at most rampup x the updates
// made so far, d_n = min(decay, 0.5^(1 / (rampup n))), so a short run averages its recent
// weights instead of dragging G's early ones along.
// Buffers (BN running statistics, spectral-norm u/v) are copied from the live G; the BN
// statistics that fit the averaged weights are re-estimated before the EMA G is used
// (gan/models/standing_stats.h).
#pragma once
#include <torch/torch.h>

namespace hamgan {

class Ema {
 public:
  // `target` must have the structure of `source`; it is overwritten with a copy.
  Ema(torch::nn::Module& source, torch::nn::Module& target, double decay, int64_t start,
      double rampup = 0);
  // The decay applied at `iteration` (0 below start: a copy).
  double decay_at(int64_t iteration) const;
  // Call after each G step; `iteration` counts completed iterations, this one included
  // (BigGAN's itr): below `start` the average is a plain copy.
  void update(int64_t iteration);

 private:
  std::vector<torch::Tensor> src_params_, dst_params_, src_buffers_, dst_buffers_;
  double decay_;
  int64_t start_;
  double rampup_;
};

}  // namespace hamgan
