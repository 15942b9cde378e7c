// Classification accuracy score (Ravuri & Vinyals 2019, "Classification accuracy score for
// conditional generative models"): the project's classifier (gan/classifier) trained on
// generated images only, labelled with their conditioning classes, then tested on real images.
// A model whose samples carry its classes' information scores near a classifier trained on
// real images; one that draws the right marginal with the wrong classes scores near chance.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "gan/classifier/train_classifier.h"
#include "gan/data/dataset.h"
#include "gan/sample/sampler.h"

namespace hamgan::eval {

struct CasResult {
  double accuracy = 0;      // on `real_test`
  int64_t n_train = 0, n_test = 0;
};

// n samples of `s` (split evenly over its classes, latents from its seed, 8-bit as `sample`
// writes them) train a classifier with `opt`; its accuracy on every image of `real_test` (whose
// classes must be the model's). Deterministic for a seed. Progress to `log`.
CasResult classification_accuracy_score(const sample::Sampler& s, int64_t n, std::shared_ptr<Dataset> real_test,
                                        const ClassifierTrainOptions& opt, std::ostream& log);

}  // namespace hamgan::eval
