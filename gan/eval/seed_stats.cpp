#include "gan/eval/seed_stats.h"

#include <cmath>
#include <limits>

namespace hamgan::eval {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The continued fraction of the incomplete beta function, by the modified Lentz method
// (Numerical Recipes 6.4, betacf); converges fast for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300, eps = 1e-15;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < eps) break;
  }
  return h;
}

// I_x(a, b), the regularised incomplete beta function, for 0 <= x <= 1.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;  // the symmetry I_x(a, b) = 1 - I_{1-x}(b, a)
}

std::vector<double> without_nan(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (!std::isnan(x)) out.push_back(x);
  return out;
}

}  // namespace

MeanSd mean_sd(const std::vector<double>& values) {
  const std::vector<double> xs = without_nan(values);
  MeanSd r;
  r.n = static_cast<int64_t>(xs.size());
  if (xs.empty()) return {kNan, kNan, 0};
  double sum = 0;
  for (double x : xs) sum += x;
  r.mean = sum / static_cast<double>(xs.size());
  if (xs.size() < 2) {
    r.sd = kNan;
    return r;
  }
  double ss = 0;
  for (double x : xs) ss += (x - r.mean) * (x - r.mean);
  r.sd = std::sqrt(ss / static_cast<double>(xs.size() - 1));
  return r;
}

WelchT welch_t(const std::vector<double>& a, const std::vector<double>& b) {
  const MeanSd ma = mean_sd(a), mb = mean_sd(b);
  if (ma.n < 2 || mb.n < 2) return {kNan, kNan, kNan};
  const double va = ma.sd * ma.sd / static_cast<double>(ma.n), vb = mb.sd * mb.sd / static_cast<double>(mb.n);
  if (!(va + vb > 0)) return {kNan, kNan, kNan};
  WelchT w;
  w.t = (ma.mean - mb.mean) / std::sqrt(va + vb);
  w.df = (va + vb) * (va + vb) /
         (va * va / static_cast<double>(ma.n - 1) + vb * vb / static_cast<double>(mb.n - 1));
  w.p = student_t_p(w.t, w.df);
  return w;
}

double student_t_p(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kNan;
  if (std::isinf(t)) return 0;
  return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

}  // namespace hamgan::eval
