// Feature extraction over any image source: a callback yields prepared batches (see
// InceptionExtractor::prepare) until it returns an undefined tensor. Generators' samples,
// image folders and (later) checkpoints all plug in here.
#pragma once
#include <torch/torch.h>

#include <functional>

#include "metrics/inception.h"

namespace hamgan::metrics {

using BatchSource = std::function<torch::Tensor()>;

struct Features {
  torch::Tensor pool;             // [N, 2048] float32, CPU
  torch::Tensor logits_unbiased;  // [N, 1008] when requested
};

Features extract_features(const InceptionExtractor& net, const BatchSource& next, bool want_logits);

}  // namespace hamgan::metrics
