// Feature extraction over any image source: a callback yields prepared batches (see
// FeatureNet::prepare) until it returns an undefined tensor. Image folders
// (metrics/image_dir.h), data sources (gan/eval) and checkpoints' samples (gan/sample) plug in here.
#pragma once
#include <torch/torch.h>

#include <functional>

#include "metrics/feature_net.h"

namespace hamgan::metrics {

// Not gan/train's BatchSource (real training batches with labels): feature-network inputs only.
using PreparedBatches = std::function<torch::Tensor()>;

struct Features {
  torch::Tensor pool;    // [N, dim] float32, CPU
  torch::Tensor logits;  // [N, 1008] Inception (fc without bias) or [N, classes] classifier, when requested
  torch::Tensor labels;  // [N] int64 classes when the source knows them (data sources, class folders)
};

// `progress`: a line every few seconds on stderr once it takes long (off for a rank's share).
Features extract_features(const FeatureNet& net, const PreparedBatches& next, bool want_logits, bool progress = true);

}  // namespace hamgan::metrics
