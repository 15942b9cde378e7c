// The metric registry: adding a metric is its own file (its maths and its score function) plus
// one line here.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/word_list.h"
#include "metrics/class_accuracy.h"
#include "metrics/frechet.h"
#include "metrics/inception_score.h"
#include "metrics/intra_class_fid.h"
#include "metrics/kid.h"
#include "metrics/metric.h"
#include "metrics/prdc.h"

namespace hamgan::metrics {

namespace {
// Trains a classifier on samples (Ravuri & Vinyals 2019): supplied by gan/eval/cas.h.
MetricValue score_cas(MetricInputs& in) {
  if (!in.samples_classifier) fail("cas: the classification accuracy score needs a checkpoint's samples");
  return in.samples_classifier();
}
constexpr auto L = Better::Lower;
constexpr auto H = Better::Higher;
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

bool ValueRange::holds(double v) const {
  const auto slack = [](double end) { return 1e-6 * std::max(1.0, std::abs(end)); };
  return (std::isinf(lowest) || v >= lowest - slack(lowest)) && (std::isinf(highest) || v <= highest + slack(highest));
}

std::string ValueRange::text() const {
  const auto end = [](double x) {
    std::ostringstream o;
    o << x;
    return o.str();
  };
  return (std::isinf(lowest) ? "(-inf" : "[" + end(lowest)) + ", " + (std::isinf(highest) ? "inf)" : end(highest) + "]");
}

const std::vector<MetricEntry>& metric_registry() {
  // name, better, needs, automatic, per_checkpoint, score, help, range (lowest, highest)
  static const std::vector<MetricEntry> all = {
      {"fid", L, kNeedsNothing, true, true, score_fid, "Frechet distance of the features (always)", {0, kInf}},
      {"is", H, kInception, false, true, score_is, "Inception Score (Inception's logits only)", {1, kInf}},
      {"kid", L, kRealFeatures, false, true, score_kid, "kernel (MMD) distance of the features, unbiased",
       {-kInf, kInf}},  // an unbiased MMD^2 estimate: slightly below 0 when the sets match
      {"class_acc", H, kClassifier, true, true, score_class_acc, "accuracy of a domain classifier on the fakes' classes (always with one)", {0, 1}},
      {"precision", H, kRealFeatures, false, true, score_precision, "fraction of fakes near real images (k 3)", {0, 1}},
      {"recall", H, kRealFeatures, false, true, score_recall, "fraction of reals near fake images (k 3)", {0, 1}},
      {"density", H, kRealFeatures, false, true, score_density, "fakes per real neighbourhood (k 5)", {0, kInf}},
      {"coverage", H, kRealFeatures, false, true, score_coverage, "fraction of real neighbourhoods with a fake (k 5)", {0, 1}},
      {"ifid", L, kRealFeatures | kClasses, false, true, score_ifid, "mean FID within each class", {0, kInf}},
      {"cas", H, kSamples, false, false, score_cas, "accuracy on real images of a classifier trained on samples (minutes)", {0, 1}},
  };
  return all;
}

std::vector<std::string> metric_names() {
  std::vector<std::string> n;
  for (const auto& e : metric_registry()) n.push_back(e.name);
  return n;
}

std::vector<std::string> table_metric_names() {
  std::vector<std::string> n;
  for (const auto& e : metric_registry())
    if (e.per_checkpoint) n.push_back(e.name);
  return n;
}

const MetricEntry& metric_entry(const std::string& name) {
  for (const auto& e : metric_registry())
    if (e.name == name) return e;
  fail("unknown metric '", name, "' (known: ", join_words(metric_names()), ")");
}

bool lower_is_better(const std::string& name) { return metric_entry(name).better == Better::Lower; }

bool MetricSet::has(const std::string& name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void MetricSet::add(const std::string& name) {
  if (has(name)) return;
  metric_entry(name);  // a known one
  std::vector<std::string> ordered;
  for (const auto& n : metric_names())
    if (n == name || has(n)) ordered.push_back(n);
  names = ordered;
}

void MetricSet::remove(const std::string& name) { names.erase(std::remove(names.begin(), names.end(), name), names.end()); }

bool MetricSet::any_needs(unsigned needs) const {
  for (const auto& n : names)
    if (metric_entry(n).needs & needs) return true;
  return false;
}

std::string MetricSet::text() const { return join_words(names, ","); }

MetricSet parse_metric_list(const std::string& text) {
  MetricSet m;
  m.add("fid");
  for (const auto& w : parse_word_list(text, metric_names(), "metric")) m.add(w);
  return m;
}

MetricSet every_table_metric() {
  MetricSet m;
  for (const auto& n : table_metric_names()) m.add(n);
  return m;
}

}  // namespace hamgan::metrics
