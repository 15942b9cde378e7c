// The scale a run's scores are read on: the data source's own test images scored as the run's
// checkpoints' samples are (the same feature network, metrics and training images as
// reference, as many test images as samples), one row in DIR/real_scores.csv (the score
// table's format, iteration 0), which DIR/scores.png draws beside the samples' line in every
// panel. Real images do not reach recall or coverage 1 either: for two samples of one
// distribution a real image's k nearest others, among N - 1 reals and M fakes, are all real with
// probability C(N-1, k) / C(N+M-1, k), so coverage (Naeem et al. 2020, k 5) expects
// 1 - 2^-5 = 0.97 at N = M. Beside their line a run's figures read as what they are.
#pragma once
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "gan/eval/metric_set.h"
#include "gan/eval/reference.h"
#include "gan/eval/score.h"
#include "gan/eval/score_table.h"

namespace hamgan::eval {

// The features (labels, logits when asked) of `o.n` test images of data source `source`
// (class-balanced; 0: all; o.at_most: all when the split holds fewer), named "<source> (test
// split)" in messages; nullopt when the source has no test split (a folder, a packed file,
// Fashion-MNIST without its t10k files).
std::optional<metrics::Features> test_split_features(const std::string& source, const ReferenceOptions& o,
                                                     const metrics::FeatureNet& net, bool want_logits);

// DIR/real_scores.csv for a run scored with n samples against the reference that `reference`
// gives (the run's, made only when needed) from data source `source`: kept when it holds a row
// of this feature network and count, else computed and written (with a line on `log`). Nothing
// when the source has no test split, and only a note when it has fewer than n images. A file
// that does not read as a score table is an error naming it.
void ensure_real_scores(const std::string& run_dir, const std::string& source, ReferenceOptions o, int64_t n,
                        const std::function<Reference()>& reference, const metrics::FeatureNet& net,
                        const MetricSet& m, std::ostream& log);

// The row of DIR/real_scores.csv scored in feature network `net` with `n` test images, for a table
// of n samples, if there is one: a row of another count is never drawn or shown beside it.
std::optional<ScoreRow> real_scores_of(const std::string& run_dir, const std::string& net, int64_t n);

}  // namespace hamgan::eval
