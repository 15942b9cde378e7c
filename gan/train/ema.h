// Exponential moving average of G's weights (BigGAN-PyTorch utils.ema; Yazici et al.
// 2019): before `start` iterations the average is a copy, then w_ema <- d w_ema + (1-d) w.
// Buffers (BN running statistics, spectral-norm u/v) are copied from the live G, so the
// EMA G's statistics are the live G's.
#pragma once
#include <torch/torch.h>

namespace hamgan {

class Ema {
 public:
  // `target` must have the structure of `source`; it is overwritten with a copy.
  Ema(torch::nn::Module& source, torch::nn::Module& target, double decay, int64_t start);
  // Call after each G step; `iteration` counts completed iterations, this one included
  // (BigGAN's itr): below `start` the average is a plain copy.
  void update(int64_t iteration);

 private:
  std::vector<torch::Tensor> src_params_, dst_params_, src_buffers_, dst_buffers_;
  double decay_;
  int64_t start_;
};

}  // namespace hamgan
