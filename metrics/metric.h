// An evaluation metric: a number comparing generated images with real ones, named by one word
// everywhere: `hamgan fid --metrics`, a config's eval.metrics and eval.best_metric, the
// column of a run's scores.csv, its panel of scores.png and `hamgan compare`'s columns.
// metrics/registry.cpp holds the table, one line per metric (as layers/context/registry.cpp
// lists the context modules); each metric's function lives in its own file beside its maths.
// tests/test_metric_registry.cpp sweeps every registered metric through every path.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "metrics/extract.h"
#include "metrics/feature_net.h"

namespace hamgan::metrics {

enum class Better { Lower, Higher };

// What a metric needs beyond the fake features and the reference's mean and covariance.
enum MetricNeeds : unsigned {
  kNeedsNothing = 0,
  kRealFeatures = 1u << 0,  // the real images' features (not an .npz of statistics)
  kClasses = 1u << 1,       // the classes of both sides' images
  kClassifier = 1u << 2,    // a domain classifier as feature network (its class logits)
  kInception = 1u << 3,     // Inception's ImageNet logits (not a domain classifier)
  kSamples = 1u << 4,       // a checkpoint to draw fresh samples from
};

// A metric's result: its value (NaN when not computed), how it prints after the name (default:
// the value), and what the caller should say next to it.
struct MetricValue {
  double value = std::numeric_limits<double>::quiet_NaN();
  std::string shown;                   // "" prints the value alone
  std::vector<std::string> warnings;   // numbers computed but not meaning what they seem
  std::vector<std::string> notes;      // why a number is missing or unreliable
};

// What a metric is computed from. `cache` shares a computation between metrics (precision,
// recall, density and coverage come from one k-NN pass).
struct MetricInputs {
  const Features& fake;
  const FeatureNet& net;
  torch::Tensor real_mu, real_sigma;    // the reference's statistics
  torch::Tensor real_pool, real_labels;  // undefined: statistics only / no classes
  std::string real_name;                 // for messages ("" when unnamed)
  // The classification accuracy score trains a classifier on a checkpoint's samples: only the
  // layer that draws them can (gan/eval/cas.h); undefined elsewhere.
  std::function<MetricValue()> samples_classifier;
  std::map<std::string, std::shared_ptr<void>> cache;
};

using MetricFn = std::function<MetricValue(MetricInputs&)>;

// The values a metric can take, both ends included: a table holding another (a negative FID, a
// precision of 1.3) is damaged or hand-edited, and such a number must never rank as a score.
// Rounding just past an end (within 1e-6: the FID of two equal sets computes as about -1e-11)
// is that end.
struct ValueRange {
  double lowest = -std::numeric_limits<double>::infinity();
  double highest = std::numeric_limits<double>::infinity();
  bool holds(double v) const;
  std::string text() const;  // "[0, 1]", "[0, inf)", "(-inf, inf)"
};

struct MetricEntry {
  std::string name;       // the one word
  Better better;          // which way is better (eval.best_metric, compare)
  unsigned needs;         // MetricNeeds
  bool automatic;         // computed whenever its needs are met, asked or not (fid, class_acc)
  bool per_checkpoint;    // fit for a run's table (a column, --all); cas takes minutes per score
  MetricFn score;
  std::string help;       // one line for --help and the docs
  ValueRange range;       // what it can be
};

const std::vector<MetricEntry>& metric_registry();
std::vector<std::string> metric_names();
// The metrics of a run's table (per_checkpoint), in registry order: its columns and panels.
std::vector<std::string> table_metric_names();
const MetricEntry& metric_entry(const std::string& name);  // error lists the known names
bool lower_is_better(const std::string& name);

// A set of metrics, kept in registry order.
struct MetricSet {
  std::vector<std::string> names;
  bool has(const std::string& name) const;
  void add(const std::string& name);
  void remove(const std::string& name);
  bool any_needs(unsigned needs) const;  // some metric of the set needs one of `needs`
  std::string text() const;              // "fid,kid,precision"
};

// "fid,kid,precision" (core/word_list.h; fid is always in). Error without the key's name: the
// caller prefixes the flag or config key.
MetricSet parse_metric_list(const std::string& text);
// Every metric fit for a run's table (what `--all` starts from).
MetricSet every_table_metric();

}  // namespace hamgan::metrics
