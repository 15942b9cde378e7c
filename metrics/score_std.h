// A score reported as mean and standard deviation over splits or subsets (the Inception Score
// over its splits, KID over its subsets), as torch-fidelity reports them: the population
// standard deviation (np.std, ddof 0), printed "mean +- sd" after the metric's name.
#pragma once
#include <vector>

#include "metrics/metric.h"

namespace hamgan::metrics {

struct ScoreStd {
  double mean = 0, std = 0;
};

// Mean and population standard deviation of `values` (np.mean, np.std).
ScoreStd mean_and_std(const std::vector<double>& values);

// The registry's result for such a score: the mean as value, shown as "mean +- sd".
MetricValue shown_with_std(const ScoreStd& s);

}  // namespace hamgan::metrics
