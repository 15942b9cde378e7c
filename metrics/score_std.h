// A score reported as mean and standard deviation over splits or subsets (the Inception Score
// over its splits, KID over its subsets), as torch-fidelity reports them: the population
// standard deviation (np.std, ddof 0), printed "mean +- sd" after the metric's name.
#pragma once
#include <string>
#include <vector>

#include "metrics/metric.h"

namespace hamgan::metrics {

struct ScoreStd {
  double mean = 0, std = 0;  // std NaN where the parts cannot vary (no_spread_why says why)
  std::string no_spread_why;
};

// Mean and population standard deviation of `values` (np.mean, np.std).
ScoreStd mean_and_std(const std::vector<double>& values);

// The registry's result for such a score: the mean as value, shown as "mean +- sd"; without a
// spread (every subset the whole set, a single split) the mean alone, and a note saying why: a
// spread of rounding noise ("+- 6e-14") would read as a measured one.
MetricValue shown_with_std(const ScoreStd& s);

}  // namespace hamgan::metrics
