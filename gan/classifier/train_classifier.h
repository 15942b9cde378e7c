// Training the domain classifier (metrics/classifier.h) on a labelled data source: Adam with
// a cosine learning-rate decay to 0, cross-entropy, random horizontal flips (as the GAN's
// loader), images exactly as the GAN sees them ([-1, 1], its resolution and channels).
// Deterministic: the initial weights, the per-epoch order and the flips come from the seed.
// Training is sized in optimizer steps: `steps`, or `epochs` passes but at least `min_steps`
// (a folder of 200 images is one or two steps an epoch at batch 128: a few epochs of it teach
// nothing). The held-out split is large enough to tell the classifier from chance
// (metrics::min_images_to_beat_chance), or the source is too small: an error before training.
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
  int64_t steps = 0;      // > 0: exactly this many optimizer steps (epochs not used)
  int64_t min_steps = 0;  // with epochs: at least this many steps
  double lr = 2e-3;
  uint64_t seed = 0;
  int workers = 2;        // image reading threads
  double holdout = 0.1;   // fraction of the training source held out when there is no test split
  bool flip = true;
  int64_t width = 16, feature_dim = 128;  // metrics::ClassifierOptions (the rest comes from the data)
};

struct ClassifierTrainResult {
  metrics::DomainClassifier net{nullptr};
  std::vector<double> epoch_loss;  // mean training cross-entropy per epoch (the last may be partial)
  int64_t steps = 0;               // optimizer steps taken
  double test_accuracy = 0;
  int64_t n_train = 0, n_test = 0;  // n_test: the test images the accuracy counts (decodable ones)
  int64_t test_hits = 0;            // of them, classified right
  double chance = 0;                // max(1 / classes, the tested images' largest class share)
  std::string test_split;  // "test split" or "held-out split"
};

// `test`: the source's test split, or null to hold out `holdout` of `train` (evenly spread
// indices, independent of the seed; more when that is too few to tell the classifier from
// chance, said on `log`). Progress goes to `log`.
ClassifierTrainResult train_classifier(std::shared_ptr<Dataset> train, std::shared_ptr<Dataset> test,
                                       const ClassifierTrainOptions& opt, std::ostream& log);
// Accuracy of `net` (eval mode) on the images `index` of `data` (all when empty).
double classifier_accuracy(metrics::DomainClassifier& net, const Dataset& data, const std::vector<int64_t>& index,
                           int64_t batch, int workers);
// The same as counts: right answers, decodable images tested, and how many of them each class has.
struct ClassifierScore {
  int64_t hits = 0, n = 0;
  std::vector<int64_t> per_class;
  double chance() const;  // max(1 / classes, the largest class share): what always guessing one class gets
};
ClassifierScore classifier_score(metrics::DomainClassifier& net, const Dataset& data, const std::vector<int64_t>& index,
                                 int64_t batch, int workers);

}  // namespace hamgan
