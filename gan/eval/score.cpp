#include "gan/eval/score.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <ostream>

#include "core/error.h"
#include "gan/sample/sample_batches.h"
#include "metrics/frechet.h"
#include "metrics/inception_score.h"
#include "metrics/intra_class_fid.h"
#include "metrics/kid.h"
#include "metrics/prdc.h"

namespace hamgan::eval {

bool wants_logits(const metrics::FeatureNet& net, const MetricSet& m) {
  return net.n_classes() > 0 || (m.is && net.has_logits());
}

Score score_features(const metrics::Features& fake, const Reference& ref, const metrics::FeatureNet& net,
                     const MetricSet& m) {
  metrics::check_same_net(ref.stats, net.identity(), "the reference");
  const auto t0 = std::chrono::steady_clock::now();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Score r;
  r.is = r.is_std = r.kid = r.kid_std = r.class_acc.overall = nan;
  r.precision = r.recall = r.density = r.coverage = r.ifid = nan;
  r.n = fake.pool.size(0);
  const auto fs = metrics::compute_stats(fake.pool);
  r.fid = metrics::frechet_distance(ref.stats.mu, ref.stats.sigma, fs.mu, fs.sigma);
  const bool domain = net.n_classes() > 0;
  if (domain && fake.labels.defined()) r.class_acc = metrics::class_accuracy(fake.logits, fake.labels, "the fake images");
  if (m.is && !domain && fake.logits.defined()) {
    const auto is = metrics::inception_score(fake.logits, static_cast<int>(std::min<int64_t>(10, r.n)));
    r.is = is.mean, r.is_std = is.std;
  }
  if (m.needs_real_features() && !ref.pool.defined()) r.notes.push_back(ref.no_kid_why);
  if (ref.pool.defined()) {
    if (m.kid) {
      const auto k = metrics::kernel_inception_distance(ref.pool, fake.pool, 100, 1000, 0);
      r.kid = k.mean, r.kid_std = k.std;
    }
    if (m.pr || m.dc) {  // Kynkaanniemi et al. 2019 (k 3); Naeem et al. 2020 (k 5)
      const metrics::Prdc p = metrics::precision_recall_density_coverage(ref.pool, fake.pool);
      if (m.pr) r.precision = p.precision, r.recall = p.recall;
      if (m.dc) r.density = p.density, r.coverage = p.coverage;
      for (const std::string& w : p.warnings) {
        std::string named = w;  // "the real features" -> which real images
        if (!ref.name.empty() && named.rfind("the real features", 0) == 0)
          named.replace(0, 17, "the real features of " + ref.name);
        r.warnings.push_back("precision/recall/density/coverage: " + named);
      }
    }
    if (m.ifid) {
      if (!ref.labels.defined() || !fake.labels.defined()) {  // callers check first; never a silent gap
        fail("ifid: intra-class FID needs the classes of the ", ref.labels.defined() ? "fake" : "real",
             " images, and ", ref.labels.defined() ? "they have" : ref.name + " has",
             " none (a data source or class directories have them; samples have theirs)");
      } else {
        const int64_t k = std::max(ref.labels.max().item<int64_t>(), fake.labels.max().item<int64_t>()) + 1;
        const metrics::IntraClassFid f = metrics::intra_class_fid(ref.pool, ref.labels, fake.pool, fake.labels, k);
        r.ifid = f.mean, r.ifid_per_class = f.per_class;
        // ImageNet has 1000 classes: a few warnings and their count, not a page of them.
        for (size_t i = 0; i < f.warnings.size() && i < 3; ++i) r.notes.push_back(f.warnings[i]);
        if (f.warnings.size() > 3)
          r.notes.push_back("... and " + std::to_string(f.warnings.size() - 3) + " more classes with such warnings");
      }
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Score score_samples(const sample::Sampler& s, int64_t n, const metrics::FeatureNet& net, const Reference& ref,
                    const MetricSet& m, bool quantize) {
  metrics::check_same_net(ref.stats, net.identity(), "the reference");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> classes;
  for (int64_t c = 0; c < s.n_classes(); ++c) classes.push_back(c);
  const auto items = sample::make_plan(classes, n, 0);
  metrics::Features f =
      metrics::extract_features(net, sample::sample_batches(s, items, net, quantize), wants_logits(net, m));
  std::vector<int64_t> y;
  for (const auto& it : items) y.push_back(it.cls);
  f.labels = torch::tensor(y, torch::kLong);
  const double sample_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Score r = score_features(f, ref, net, m);
  r.sample_seconds = sample_s;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void print_score(const Score& s, const MetricSet& m, std::ostream& out) {
  out << "FID " << s.fid << "\n";
  if (!std::isnan(s.is)) out << "IS " << s.is << " +- " << s.is_std << "\n";
  if (!std::isnan(s.kid)) out << "KID " << s.kid << " +- " << s.kid_std << "\n";
  if (!std::isnan(s.precision)) out << "precision " << s.precision << " recall " << s.recall << " (k 3)\n";
  if (!std::isnan(s.density)) out << "density " << s.density << " coverage " << s.coverage << " (k 5)\n";
  if (!std::isnan(s.ifid)) {
    out << "intra-class FID " << s.ifid << " (per class:";
    for (size_t c = 0; c < s.ifid_per_class.size(); ++c) out << " " << c << " " << s.ifid_per_class[c];
    out << ")\n";
  }
  for (const auto& w : s.warnings) out << "warning: " << w << "\n";
  for (const auto& w : s.notes) out << "note: " << w << "\n";
}

}  // namespace hamgan::eval
