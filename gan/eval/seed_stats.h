// Statistics over seeds: a metric's mean and sample standard deviation over runs that differ
// only in their seed, and Welch's unequal-variances t-test between two such groups (Welch
// 1947: t = (mean_a - mean_b) / sqrt(s_a^2 / n_a + s_b^2 / n_b), Welch-Satterthwaite degrees
// of freedom, two-sided p from Student's t distribution), as scipy.stats.ttest_ind(a, b,
// equal_var=False) computes them (tests/oracle/seed_stats.py).
#pragma once
#include <cstdint>
#include <vector>

namespace hamgan::eval {

struct MeanSd {
  double mean = 0, sd = 0;  // mean NaN without values; sd (n - 1) NaN with fewer than two
  int64_t n = 0;            // the values counted: NaN values are left out
};
MeanSd mean_sd(const std::vector<double>& values);

struct WelchT {
  double t = 0, df = 0, p = 0;  // all NaN where a side has fewer than two values or both sds are 0
};
// Welch's t of a's mean against b's (positive: a's is larger). NaN values are left out.
WelchT welch_t(const std::vector<double>& a, const std::vector<double>& b);

// Two-sided p of Student's t distribution with `df` degrees of freedom (df > 0, not
// necessarily whole): P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2), the regularised
// incomplete beta function (Numerical Recipes 6.4).
double student_t_p(double t, double df);

}  // namespace hamgan::eval
