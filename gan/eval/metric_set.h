// Which metrics of the registry (metrics/metric.h) a score can compute where it is asked: with
// which feature network, against which reference, for which form. A metric asked for that
// cannot be computed is an error before anything is read, naming the flag or config key that
// asked for it; `--all` keeps the ones that can.
#pragma once
#include <string>

#include "metrics/metric.h"

namespace hamgan::eval {

using metrics::MetricSet;

// `list` (the value of flag or key `key`) parsed, errors naming `key`.
MetricSet parse_metrics(const std::string& list, const std::string& key = "--metrics");

// What a score can compute, and the names of what asked.
struct MetricScope {
  std::string key = "--metrics";  // the metric list's flag or config key
  std::string features_key = "--features";  // the feature network's flag or config key
  std::string real_key = "--real", real;  // the reference's flag or key, and its value
  bool real_is_stats = false;     // an .npz: statistics only, no features to compare
  std::string network = "inception";  // the feature network (metrics/feature_nets.h): only Inception's has IS
  std::string no_samples_why;     // non-empty: no metric needing fresh samples here, and why
};
// Error naming scope.key (and the reference's flag or key where it is the reason) for the first
// metric of `m` that the scope cannot compute.
void check_metrics_possible(const MetricSet& m, const MetricScope& scope);
// The metrics of `m` the scope can compute (what `--all` means).
MetricSet possible_metrics(MetricSet m, const MetricScope& scope);

}  // namespace hamgan::eval
