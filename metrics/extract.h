// Feature extraction over any image source: a callback yields prepared batches (see
// InceptionExtractor::prepare) until it returns an undefined tensor. Image folders
// (metrics/image_dir.h), data sources (gan/eval) and checkpoints' samples (gan/sample) plug in here.
#pragma once
#include <torch/torch.h>

#include <functional>

#include "metrics/inception.h"

namespace hamgan::metrics {

// Not gan/train's BatchSource (real training batches with labels): Inception inputs only.
using PreparedBatches = std::function<torch::Tensor()>;

struct Features {
  torch::Tensor pool;             // [N, 2048] float32, CPU
  torch::Tensor logits_unbiased;  // [N, 1008] when requested
};

Features extract_features(const InceptionExtractor& net, const PreparedBatches& next, bool want_logits);

}  // namespace hamgan::metrics
