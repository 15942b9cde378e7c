// A feature network for tests of what goes into a statistic: features = each image's mean per
// channel, no logits, on the CPU.
#pragma once
#include <torch/torch.h>

#include "metrics/feature_net.h"

namespace hamgan::test {

struct MeanNet : metrics::FeatureNet {
  torch::Tensor prepare(const torch::Tensor& x) const override { return x; }
  metrics::FeatureOutput features(const torch::Tensor& p, bool) const override { return {p.mean({2, 3}), {}}; }
  bool has_logits() const override { return false; }
  torch::Device device() const override { return torch::kCPU; }
};

}  // namespace hamgan::test
