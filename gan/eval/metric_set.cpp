#include "gan/eval/metric_set.h"

#include "core/error.h"

namespace hamgan::eval {

MetricSet parse_metrics(const std::string& list, const std::string& key) {
  try {
    return metrics::parse_metric_list(list);
  } catch (const Error& e) {
    fail(key, " '", list, "': ", e.what());
  }
}

namespace {

// Why scope `s` cannot compute metric `name` ("" when it can).
std::string why_not(const std::string& name, const MetricScope& s) {
  const unsigned needs = metrics::metric_entry(name).needs;
  if ((needs & metrics::kInception) && s.network == "classifier")
    return "needs Inception's 1000 ImageNet logits; with a domain classifier (" + s.features_key +
           ") class accuracy is reported instead. Drop '" + name + "', or score with Inception";
  if ((needs & metrics::kInception) && s.network != "inception")
    return "needs Inception's 1000 ImageNet logits; the " + s.network + " features of " + s.features_key +
           " have none. Drop '" + name + "', or score with Inception";
  if ((needs & metrics::kRealFeatures) && s.real_is_stats)
    return "compares real and fake image features, and " + s.real_key + " " + s.real +
           " holds only statistics (mean and covariance). Give " + s.real_key +
           " as an image directory or data source, or drop it";
  if ((needs & metrics::kSamples) && !s.no_samples_why.empty()) return s.no_samples_why;
  return "";
}

}  // namespace

void check_metrics_possible(const MetricSet& m, const MetricScope& s) {
  for (const auto& name : m.names)
    if (const std::string why = why_not(name, s); !why.empty()) fail(s.key, " ", name, ": ", why);
}

MetricSet possible_metrics(MetricSet m, const MetricScope& s) {
  for (const auto& name : MetricSet(m).names)
    if (!why_not(name, s).empty()) m.remove(name);
  return m;
}

}  // namespace hamgan::eval
