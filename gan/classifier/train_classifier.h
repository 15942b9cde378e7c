// Training the domain classifier (metrics/classifier.h) on a labelled data source: Adam with
// a cosine learning-rate decay to 0, cross-entropy, random horizontal flips (as the GAN's
// loader), images exactly as the GAN sees them ([-1, 1], its resolution and channels).
// Deterministic: the initial weights, the per-epoch order and the flips come from the seed.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "gan/data/dataset.h"
#include "metrics/classifier.h"

namespace hamgan {

struct ClassifierTrainOptions {
  int64_t epochs = 3, batch = 128;
  double lr = 2e-3;
  uint64_t seed = 0;
  int workers = 2;        // image reading threads
  double holdout = 0.1;   // fraction of the training source held out when there is no test split
  bool flip = true;
  int64_t width = 16, feature_dim = 128;  // metrics::ClassifierOptions (the rest comes from the data)
};

struct ClassifierTrainResult {
  metrics::DomainClassifier net{nullptr};
  std::vector<double> epoch_loss;  // mean training cross-entropy per epoch
  double test_accuracy = 0;
  int64_t n_train = 0, n_test = 0;
  std::string test_split;  // "test split" or "held-out split"
};

// `test`: the source's test split, or null to hold out `holdout` of `train` (evenly spread
// indices, independent of the seed). Progress goes to `log`.
ClassifierTrainResult train_classifier(std::shared_ptr<Dataset> train, std::shared_ptr<Dataset> test,
                                       const ClassifierTrainOptions& opt, std::ostream& log);
// Accuracy of `net` (eval mode) on the images `index` of `data` (all when empty).
double classifier_accuracy(metrics::DomainClassifier& net, const Dataset& data, const std::vector<int64_t>& index,
                           int64_t batch, int workers);

}  // namespace hamgan
