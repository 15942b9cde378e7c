// Class accuracy of generated (or real) images under a domain classifier: the fraction of
// class-c images the classifier assigns to class c, per class and overall (all images).
#pragma once
#include <torch/torch.h>

#include "metrics/metric.h"

#include <string>
#include <vector>

namespace hamgan::metrics {

struct ClassAccuracy {
  double overall = 0;
  std::vector<double> per_class;  // NaN for a class with no images
  std::vector<int64_t> count;     // images per class
};

// logits [N, n_classes], labels [N] int64 in 0..n_classes-1 (else an error naming `what`).
ClassAccuracy class_accuracy(const torch::Tensor& logits, const torch::Tensor& labels, const std::string& what);
// "0.853 (per class: 0 0.91, 1 0.98, ...)"; classes without images are left out.
std::string format_class_accuracy(const ClassAccuracy& a);

// The registry's class_acc (metrics/metric.h): the domain classifier's accuracy under the fakes' classes.
MetricValue score_class_acc(MetricInputs& in);

}  // namespace hamgan::metrics
