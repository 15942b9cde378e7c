#include "gan/eval/real_scores.h"

#include <chrono>
#include <iomanip>
#include <memory>

#include "gan/data/sources.h"
#include "gan/data/test_split.h"

namespace hamgan::eval {

std::optional<metrics::Features> test_split_features(const std::string& source, const ReferenceOptions& o,
                                                     const metrics::FeatureNet& net, bool want_logits) {
  DataConfig dc;
  dc.path = source;
  dc.format = resolve_format(o.format, source);
  std::shared_ptr<Dataset> test = open_test_split(dc, o.resolution, source_channels(o, dc.format));
  if (!test) return std::nullopt;
  return dataset_features(std::move(test), source + " (test split)", o, net, want_logits);
}

std::optional<ScoreRow> real_scores_of(const std::string& run_dir, const std::string& net, int64_t n) {
  for (const ScoreRow& r : read_score_table(real_scores_csv(run_dir)))
    if (r.net == net && r.n == n) return r;  // a table holds one n (check_run_n), and so does its line
  return std::nullopt;
}

void ensure_real_scores(const std::string& run_dir, const std::string& source, ReferenceOptions o, int64_t n,
                        const std::function<Reference()>& reference, const metrics::FeatureNet& net,
                        const MetricSet& m, std::ostream& log) {
  if (real_scores_of(run_dir, net.identity(), n)) return;
  const auto t0 = std::chrono::steady_clock::now();
  o.n = n, o.at_most = true;
  const std::optional<metrics::Features> test = test_split_features(source, o, net, wants_logits(net, m));
  if (!test) return;
  // FID's bias, and every k-NN metric's, depends on the count: a split smaller than the samples
  // would draw a line on another scale, so none is drawn.
  if (test->pool.size(0) < n) {
    log << "note: " << source << " (test split) has " << test->pool.size(0) << " images, fewer than the " << n
        << " samples: no real test images' line (its figures would be of another count)\n" << std::flush;
    return;
  }
  const Score sc = score_features(*test, reference(), net, m);
  ScoreRow row;
  row.iteration = 0, row.n = sc.n, row.net = net.identity();
  row.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& [name, v] : sc.values) row.values[name] = v.value;
  write_score_table(real_scores_csv(run_dir), {row});
  log << "real test images: " << score_line(sc) << " (" << real_scores_csv(run_dir) << ")\n" << std::flush;
}

}  // namespace hamgan::eval
