// Feature extraction over any image source: a callback yields prepared batches (see
// FeatureNet::prepare) until it returns an undefined tensor. Generators' samples,
// image folders and data sources all plug in here.
#pragma once
#include <torch/torch.h>

#include <functional>

#include "metrics/feature_net.h"

namespace hamgan::metrics {

using BatchSource = std::function<torch::Tensor()>;

struct Features {
  torch::Tensor pool;    // [N, dim] float32, CPU
  torch::Tensor logits;  // [N, 1008] Inception (fc without bias) or [N, classes] classifier, when requested
  torch::Tensor labels;  // [N] int64 classes when the source knows them (data sources, class folders)
};

Features extract_features(const FeatureNet& net, const BatchSource& next, bool want_logits);

}  // namespace hamgan::metrics
