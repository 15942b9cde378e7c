#include "metrics/class_accuracy.h"

#include <cstdio>
#include <limits>

#include "core/error.h"

namespace hamgan::metrics {

ClassAccuracy class_accuracy(const torch::Tensor& logits, const torch::Tensor& labels, const std::string& what) {
  if (logits.dim() != 2 || labels.dim() != 1 || logits.size(0) != labels.size(0) || labels.size(0) == 0)
    fail(what, ": class accuracy needs logits [N, classes] and labels [N] (N >= 1); got ", logits.sizes(), " and ",
         labels.sizes());
  const int64_t k = logits.size(1);
  const torch::Tensor y = labels.to(torch::kCPU, torch::kLong);
  const int64_t lo = y.min().item<int64_t>(), hi = y.max().item<int64_t>();
  if (lo < 0 || hi >= k)
    fail(what, ": class ", lo < 0 ? lo : hi, " but the classifier knows classes 0..", k - 1,
         " (a GAN or folder with more classes than the classifier was trained on?)");
  const torch::Tensor hit = logits.to(torch::kCPU).argmax(1).eq(y).to(torch::kLong);
  const torch::Tensor n = torch::zeros({k}, torch::kLong).index_add_(0, y, torch::ones_like(y));
  const torch::Tensor c = torch::zeros({k}, torch::kLong).index_add_(0, y, hit);
  ClassAccuracy a;
  a.overall = static_cast<double>(hit.sum().item<int64_t>()) / static_cast<double>(y.size(0));
  for (int64_t i = 0; i < k; ++i) {
    const int64_t ni = n[i].item<int64_t>();
    a.count.push_back(ni);
    a.per_class.push_back(ni ? static_cast<double>(c[i].item<int64_t>()) / static_cast<double>(ni)
                             : std::numeric_limits<double>::quiet_NaN());
  }
  return a;
}

std::string format_class_accuracy(const ClassAccuracy& a) {
  char b[64];
  std::snprintf(b, sizeof b, "%.4f (per class:", a.overall);
  std::string s = b;
  bool first = true;
  for (size_t i = 0; i < a.per_class.size(); ++i) {
    if (!a.count[i]) continue;
    std::snprintf(b, sizeof b, "%s %zu %.3f", first ? "" : ",", i, a.per_class[i]);
    s += b;
    first = false;
  }
  return s + ")";
}

MetricValue score_class_acc(MetricInputs& in) {
  const ClassAccuracy a = class_accuracy(in.fake.logits, in.fake.labels, "the fake images");
  MetricValue v;
  v.value = a.overall;
  v.shown = format_class_accuracy(a);
  return v;
}

}  // namespace hamgan::metrics
