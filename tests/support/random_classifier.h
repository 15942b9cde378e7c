// A domain classifier file of random weights (torch seed 5, 32 px, width 4, 8-d features) whose
// record says it was tested above chance (accuracy 1 on 30 held-out images, chance 1 / classes),
// so that commands use it without a word: for tests of what is scored in a classifier's
// features, not of the classifier.
#pragma once
#include <torch/torch.h>

#include <string>

#include "metrics/classifier.h"

namespace hamgan::test {

inline std::string write_random_classifier(const std::string& path, int64_t classes, int64_t channels = 1) {
  metrics::ClassifierOptions o;
  o.resolution = 32, o.channels = channels, o.n_classes = classes, o.width = 4, o.feature_dim = 8;
  torch::manual_seed(5);
  metrics::DomainClassifier net(o);
  metrics::ClassifierInfo info;
  info.data = "test";
  info.test_accuracy = 1.0, info.test_n = 30, info.chance = 1.0 / static_cast<double>(classes);
  metrics::save_classifier(path, net, info);
  return path;
}

}  // namespace hamgan::test
