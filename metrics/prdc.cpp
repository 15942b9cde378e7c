#include "metrics/prdc.h"
#include <memory>
#include <sstream>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"

namespace hamgan::metrics {

namespace {

struct Points {
  torch::Tensor x;   // [n, d] float32
  torch::Tensor sq;  // [n] squared norms, computed once per set
  Points rows(int64_t s, int64_t e) const { return {x.slice(0, s, e), sq.slice(0, s, e)}; }
};

Points points(const torch::Tensor& x) { return {x, x.pow(2).sum(1)}; }

// Squared distances [rows of a, rows of b] as ||a||^2 + ||b||^2 - 2 a.b (one matmul, no
// [rows, n, d] difference tensor), clamped at 0: rounding can push a zero distance below it.
torch::Tensor sq_dist(const Points& a, const Points& b) {
  return torch::addmm(a.sq.unsqueeze(1) + b.sq.unsqueeze(0), a.x, b.x.t(), 1, -2).clamp_min_(0);
}

// For each row of a, its k smallest squared distances to the rows of b ([n_a, k], ascending),
// `block` rows of a at a time. Within one set (same_set) the self-distance is set to exactly 0
// and stays among them, as in prdc: column k is then the k-th nearest *other* point.
torch::Tensor smallest_sq_dists(const Points& a, const Points& b, int64_t k, bool same_set, int64_t block) {
  std::vector<torch::Tensor> out;
  for (int64_t s = 0; s < a.x.size(0); s += block) {
    torch::Tensor d = sq_dist(a.rows(s, std::min(s + block, a.x.size(0))), b);
    if (same_set) d.diagonal(s, 0, 1).fill_(0);  // row i of the block is point s + i
    out.push_back(std::get<0>(d.topk(k, 1, /*largest=*/false, /*sorted=*/true)));
  }
  return torch::cat(out);
}

// For each row of a, how many balls B(b_i, sqrt(radius_sq_i)) contain it (boundary included),
// `block` rows of a at a time.
torch::Tensor balls_containing(const Points& a, const Points& b, const torch::Tensor& radius_sq, int64_t block) {
  std::vector<torch::Tensor> out;
  for (int64_t s = 0; s < a.x.size(0); s += block)
    out.push_back((sq_dist(a.rows(s, std::min(s + block, a.x.size(0))), b) < radius_sq.unsqueeze(0)).sum(1));
  return torch::cat(out);
}

double fraction(const torch::Tensor& hit) { return hit.sum().item<double>() / static_cast<double>(hit.numel()); }

// A set whose points have k-NN radius 0 (k or more exact copies): their open balls are empty,
// so they can hold no point of the other set whatever the generator does. One line per set,
// naming it, how many points and which metrics lose them; nothing when there are none. "0" is
// up to `tol`: copies' distances come out of ||a||^2 + ||b||^2 - 2ab as rounding noise, not
// exactly 0.
void warn_zero_radii(const char* set, int64_t n, const std::vector<std::pair<torch::Tensor, std::string>>& radii,
                     double tol, std::vector<std::string>& out) {
  std::string parts;
  for (const auto& [radius_sq, what] : radii) {
    const int64_t zero = radius_sq.le(tol).sum().item<int64_t>();
    if (zero > 0) parts += std::string(parts.empty() ? "" : ", ") + std::to_string(zero) + " for " + what;
  }
  if (parts.empty()) return;
  out.push_back(std::string("the ") + set + " features (" + std::to_string(n) + " points) have k-NN radii of 0 (" +
                parts + "): exact duplicates, whose open balls hold nothing, so those metrics cannot count them "
                "(duplicated images, or a feature network that maps them together; not a property of the generator)");
}

}  // namespace

Prdc precision_recall_density_coverage(const torch::Tensor& real, const torch::Tensor& fake, int64_t k_pr,
                                       int64_t k_dc, int64_t block) {
  if (real.dim() != 2 || fake.dim() != 2 || real.size(1) != fake.size(1))
    fail("prdc: features of shapes ", real.sizes(), " (real) and ", fake.sizes(),
         " (fake), expected [N, d] and [M, d] with the same d");
  if (k_pr < 1 || k_dc < 1) fail("prdc: k_pr = ", k_pr, " and k_dc = ", k_dc, ", expected both >= 1");
  if (block < 1) fail("prdc: block = ", block, " rows, expected >= 1");
  const int64_t n = real.size(0), m = fake.size(0), k_max = std::max(k_pr, k_dc);
  if (n < k_max + 1)
    fail("prdc: ", n, " real points, expected at least ", k_max + 1, " (k + 1 for k_pr = ", k_pr, ", k_dc = ", k_dc,
         ")");
  if (m < k_pr + 1)
    fail("prdc: ", m, " fake points, expected at least k_pr + 1 = ", k_pr + 1, " (recall's fake balls)");
  const torch::Tensor r0 = real.detach().to(torch::kFloat);
  const torch::Tensor f0 = fake.detach().to(r0.device(), torch::kFloat);
  if (!torch::isfinite(r0).all().item<bool>() || !torch::isfinite(f0).all().item<bool>())
    fail("prdc: real or fake features contain NaN or infinity, expected finite values");
  // Distances ignore translation: centring on the real mean shrinks the norms, and with them the
  // cancellation in ||a||^2 + ||b||^2 - 2ab (features far from the origin lose digits otherwise).
  const torch::Tensor center = r0.mean(0);
  const Points r = points(r0 - center), f = points(f0 - center);

  // Column k of the within-set distances: squared radius NND_k (column 0 is the point itself).
  const torch::Tensor real_nnd = smallest_sq_dists(r, r, k_max + 1, true, block);
  const torch::Tensor fake_nnd = smallest_sq_dists(f, f, k_pr + 1, true, block);
  const torch::Tensor real_radius_pr = real_nnd.select(1, k_pr), real_radius_dc = real_nnd.select(1, k_dc);

  Prdc out{};
  // Rounding noise of a squared distance is far below 1e-9 of the squared norms it comes from;
  // distinct images' features are never that close.
  const double tol = 1e-9 * std::max(r0.pow(2).sum(1).mean().item<double>(), f0.pow(2).sum(1).mean().item<double>());
  const std::string kp = "k " + std::to_string(k_pr), kd = "k " + std::to_string(k_dc);
  warn_zero_radii("real", n, {{real_radius_pr, "precision (" + kp + ")"}, {real_radius_dc, "density and coverage (" + kd + ")"}},
                  tol, out.warnings);
  warn_zero_radii("fake", m, {{fake_nnd.select(1, k_pr), "recall (" + kp + ")"}}, tol, out.warnings);
  out.precision = fraction(balls_containing(f, r, real_radius_pr, block) > 0);
  out.recall = fraction(balls_containing(r, f, fake_nnd.select(1, k_pr), block) > 0);
  out.density = balls_containing(f, r, real_radius_dc, block).sum().item<double>() /
                (static_cast<double>(k_dc) * static_cast<double>(m));
  const torch::Tensor nearest_fake = smallest_sq_dists(r, f, 1, false, block).select(1, 0);
  out.coverage = fraction(nearest_fake < real_radius_dc);
  return out;
}

namespace {

MetricValue prdc_value(MetricInputs& in, double Prdc::*field, const char* k) {
  MetricValue v;
  auto& slot = in.cache["prdc"];
  if (!slot) {  // Kynkaanniemi et al. 2019 (k 3); Naeem et al. 2020 (k 5)
    auto p = std::make_shared<Prdc>(precision_recall_density_coverage(in.real_pool, in.fake.pool));
    for (const std::string& w : p->warnings) {
      std::string named = w;  // "the real features" -> which real images
      if (!in.real_name.empty() && named.rfind("the real features", 0) == 0)
        named.replace(0, 17, "the real features of " + in.real_name);
      v.warnings.push_back("precision/recall/density/coverage: " + named);
    }
    slot = p;
  }
  v.value = static_cast<const Prdc*>(slot.get())->*field;
  std::ostringstream o;
  o << v.value << " (k " << k << ")";
  v.shown = o.str();
  return v;
}

}  // namespace

MetricValue score_precision(MetricInputs& in) { return prdc_value(in, &Prdc::precision, "3"); }
MetricValue score_recall(MetricInputs& in) { return prdc_value(in, &Prdc::recall, "3"); }
MetricValue score_density(MetricInputs& in) { return prdc_value(in, &Prdc::density, "5"); }
MetricValue score_coverage(MetricInputs& in) { return prdc_value(in, &Prdc::coverage, "5"); }

}  // namespace hamgan::metrics
