#include "gan/eval/cas.h"

#include <vector>

#include "core/error.h"
#include "gan/data/tensor_dataset.h"
#include "gan/sample/plan.h"

namespace hamgan::eval {

CasResult classification_accuracy_score(const sample::Sampler& s, int64_t n, std::shared_ptr<Dataset> real_test,
                                        const ClassifierTrainOptions& opt, std::ostream& log) {
  if (real_test->num_classes() != s.n_classes())
    fail("classification accuracy score: the real test images have ", real_test->num_classes(),
         " classes, the model ", s.n_classes());
  const auto items = sample::all_classes_plan(s.n_classes(), n);
  std::vector<torch::Tensor> images;
  s.for_each_batch(items, [&](size_t, const torch::Tensor& x) { images.push_back(sample::to_uint8(x)); });
  std::vector<int64_t> y;
  for (const auto& it : items) y.push_back(it.cls);
  auto fake = std::make_shared<TensorDataset>(torch::cat(images), torch::tensor(y, torch::kLong),
                                              real_test->class_names());
  if (fake->resolution() != real_test->resolution() || fake->channels() != real_test->channels())
    fail("classification accuracy score: samples of ", fake->channels(), "x", fake->resolution(), "x",
         fake->resolution(), ", real test images of ", real_test->channels(), "x", real_test->resolution(), "x",
         real_test->resolution());
  log << "classification accuracy score: training a classifier on " << fake->size() << " generated images\n";
  const ClassifierTrainResult r = train_classifier(fake, real_test, opt, log);
  return {r.test_accuracy, r.n_train, r.n_test};
}

}  // namespace hamgan::eval
