#include "metrics/score_std.h"

#include <cmath>
#include <sstream>

namespace hamgan::metrics {

ScoreStd mean_and_std(const std::vector<double>& values) {
  ScoreStd r;
  for (double e : values) r.mean += e / values.size();
  for (double e : values) r.std += (e - r.mean) * (e - r.mean) / values.size();
  r.std = std::sqrt(r.std);
  return r;
}

MetricValue shown_with_std(const ScoreStd& s) {
  MetricValue v;
  v.value = s.mean;
  if (std::isnan(s.std)) {
    v.notes.push_back(s.no_spread_why);
    return v;  // printed as the value alone
  }
  std::ostringstream o;
  o << s.mean << " +- " << s.std;
  v.shown = o.str();
  return v;
}

}  // namespace hamgan::metrics
