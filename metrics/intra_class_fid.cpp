#include "metrics/intra_class_fid.h"
#include <algorithm>
#include <sstream>

#include <limits>

#include "core/error.h"
#include "metrics/frechet.h"
#include "metrics/statistics.h"

namespace hamgan::metrics {

namespace {

// Labels as int64 on the CPU, checked against the features they label and [0, n_classes).
torch::Tensor checked_labels(const torch::Tensor& labels, const torch::Tensor& features, int64_t n_classes,
                             const char* side) {
  if (labels.dim() != 1 || labels.size(0) != features.size(0))
    fail("intra_class_fid: ", side, " labels of shape ", labels.sizes(), ", expected [", features.size(0),
         "] (one per ", side, " feature row)");
  if (labels.is_floating_point() || labels.is_complex())
    fail("intra_class_fid: ", side, " labels of dtype ", labels.scalar_type(), ", expected integers");
  const torch::Tensor l = labels.detach().to(torch::kCPU, torch::kLong);
  if (l.numel() && (l.min().item<int64_t>() < 0 || l.max().item<int64_t>() >= n_classes))
    fail("intra_class_fid: ", side, " labels in [", l.min().item<int64_t>(), ", ", l.max().item<int64_t>(),
         "], expected [0, ", n_classes, ")");
  return l;
}

torch::Tensor rows_of_class(const torch::Tensor& features, const torch::Tensor& labels, int64_t c) {
  return features.index_select(0, (labels == c).nonzero().squeeze(1).to(features.device()));
}

}  // namespace

IntraClassFid intra_class_fid(const torch::Tensor& real, const torch::Tensor& real_labels, const torch::Tensor& fake,
                              const torch::Tensor& fake_labels, int64_t n_classes) {
  if (real.dim() != 2 || fake.dim() != 2 || real.size(1) != fake.size(1))
    fail("intra_class_fid: features of shapes ", real.sizes(), " (real) and ", fake.sizes(),
         " (fake), expected [N, d] and [M, d] with the same d");
  if (n_classes < 1) fail("intra_class_fid: n_classes = ", n_classes, ", expected >= 1");
  const torch::Tensor rl = checked_labels(real_labels, real, n_classes, "real");
  const torch::Tensor fl = checked_labels(fake_labels, fake, n_classes, "fake");
  const int64_t d = real.size(1);
  IntraClassFid out;
  double sum = 0;
  int64_t counted = 0;
  for (int64_t c = 0; c < n_classes; ++c) {
    const torch::Tensor xr = rows_of_class(real, rl, c), xf = rows_of_class(fake, fl, c);
    const int64_t nr = xr.size(0), nf = xf.size(0);
    out.n_real.push_back(nr);
    out.n_fake.push_back(nf);
    const std::string counts = "class " + std::to_string(c) + ": " + std::to_string(nr) + " real and " +
                               std::to_string(nf) + " fake images";
    if (nr < 2 || nf < 2) {
      out.per_class.push_back(std::numeric_limits<double>::quiet_NaN());
      out.warnings.push_back(counts + ": a covariance needs at least 2 on each side, so it has no FID and is left "
                                      "out of the mean");
      continue;
    }
    // n samples give a covariance of rank <= n - 1: singular unless n > d. FID's bias grows
    // like 1/n (Chong & Forsyth 2020), so such classes read worse than they are.
    if (std::min(nr, nf) <= d)
      out.warnings.push_back(counts + " for " + std::to_string(d) +
                             "-dimensional features: the covariance is singular, its FID is biased upwards; use "
                             "more than " + std::to_string(d) + " images per class or compare KID (unbiased)");
    const GaussianStats sr = compute_stats(xr), sf = compute_stats(xf);
    const double fid = frechet_distance(sr.mu, sr.sigma, sf.mu, sf.sigma);
    out.per_class.push_back(fid);
    sum += fid;
    ++counted;
  }
  out.mean = counted ? sum / static_cast<double>(counted) : std::numeric_limits<double>::quiet_NaN();
  return out;
}

MetricValue score_ifid(MetricInputs& in) {
  const bool real = in.real_labels.defined();
  if (!real || !in.fake.labels.defined())
    fail("ifid: intra-class FID needs the classes of the ", real ? "fake" : "real", " images, and ",
         real ? "they have" : (in.real_name.empty() ? std::string("the reference") : in.real_name) + " has",
         " none (a data source or class directories have them; samples have theirs)");
  const int64_t k = std::max(in.real_labels.max().item<int64_t>(), in.fake.labels.max().item<int64_t>()) + 1;
  const IntraClassFid f = intra_class_fid(in.real_pool, in.real_labels, in.fake.pool, in.fake.labels, k);
  MetricValue v;
  v.value = f.mean;
  std::ostringstream o;
  o << f.mean << " (per class:";
  for (size_t c = 0; c < f.per_class.size(); ++c) o << " " << c << " " << f.per_class[c];
  o << ")";
  v.shown = o.str();
  // ImageNet has 1000 classes: a few warnings and their count, not a page of them.
  for (size_t i = 0; i < f.warnings.size() && i < 3; ++i) v.notes.push_back(f.warnings[i]);
  if (f.warnings.size() > 3) v.notes.push_back("... and " + std::to_string(f.warnings.size() - 3) + " more classes with such warnings");
  return v;
}

}  // namespace hamgan::metrics
