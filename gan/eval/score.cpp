#include "gan/eval/score.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "gan/sample/sample_batches.h"
#include "metrics/frechet.h"
#include "metrics/inception_score.h"
#include "metrics/kid.h"

namespace hamgan::eval {

Score score_samples(const sample::Sampler& s, int64_t n, const metrics::FeatureNet& net,
                    const Reference& ref, bool all, bool quantize) {
  metrics::check_same_net(ref.stats, net.identity(), "the reference");
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> classes;
  for (int64_t c = 0; c < s.n_classes(); ++c) classes.push_back(c);
  const auto items = sample::make_plan(classes, n, 0);
  const bool domain = net.n_classes() > 0;
  const bool logits = domain || (all && net.has_logits());
  const metrics::Features f = metrics::extract_features(net, sample::sample_batches(s, items, net, quantize), logits);
  Score r;
  r.sample_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.is = r.is_std = r.kid = r.kid_std = r.class_acc.overall = nan;
  r.n = f.pool.size(0);
  const auto fs = metrics::compute_stats(f.pool);
  r.fid = metrics::frechet_distance(ref.stats.mu, ref.stats.sigma, fs.mu, fs.sigma);
  if (domain) {
    std::vector<int64_t> y;
    for (const auto& it : items) y.push_back(it.cls);
    r.class_acc = metrics::class_accuracy(f.logits, torch::tensor(y, torch::kLong), "samples");
  } else if (logits) {
    const auto is = metrics::inception_score(f.logits, static_cast<int>(std::min<int64_t>(10, r.n)));
    r.is = is.mean, r.is_std = is.std;
  }
  if (all && ref.pool.defined()) {
    const auto k = metrics::kernel_inception_distance(ref.pool, f.pool, 100, 1000, 0);
    r.kid = k.mean, r.kid_std = k.std;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace hamgan::eval
