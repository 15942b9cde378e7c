#include "gan/eval/score.h"

#include "metrics/feature_nets.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <ostream>
#include <sstream>

#include "core/error.h"
#include "gan/sample/plan.h"
#include "gan/sample/sample_batches.h"

namespace hamgan::eval {

double Score::value(const std::string& name) const {
  const auto it = values.find(name);
  return it == values.end() ? std::numeric_limits<double>::quiet_NaN() : it->second.value;
}

bool wants_logits(const metrics::FeatureNet& net, const MetricSet& m) {
  return net.n_classes() > 0 || (m.any_needs(metrics::kInception) && net.has_logits());
}

namespace {

// Whether `e`'s inputs are there (a metric asked for without them was refused before anything
// was read, or is said in a note).
bool available(const metrics::MetricEntry& e, const metrics::MetricInputs& in) {
  if ((e.needs & metrics::kRealFeatures) && !in.real_pool.defined()) return false;
  if ((e.needs & metrics::kClassifier) && (in.net.n_classes() == 0 || !in.fake.labels.defined())) return false;
  if ((e.needs & metrics::kInception) && (in.net.n_classes() > 0 || !in.fake.logits.defined())) return false;
  if ((e.needs & metrics::kSamples) && !in.samples_classifier) return false;
  return true;
}

}  // namespace

Score score_features(const metrics::Features& fake, const Reference& ref, const metrics::FeatureNet& net,
                     const MetricSet& m, std::function<metrics::MetricValue()> samples_classifier) {
  metrics::check_same_net(ref.stats, net.identity(), "the reference");
  const auto t0 = std::chrono::steady_clock::now();
  Score r;
  r.n = fake.pool.size(0);
  r.distance = metrics::distance_name(net.identity());
  metrics::MetricInputs in{fake, net, ref.stats.mu, ref.stats.sigma, ref.pool, ref.labels, ref.name,
                           std::move(samples_classifier), {}};
  if (m.any_needs(metrics::kRealFeatures) && !ref.pool.defined()) r.notes.push_back(ref.no_kid_why);
  for (const auto& e : metrics::metric_registry()) {
    if (!(e.automatic || m.has(e.name)) || !available(e, in)) continue;
    metrics::MetricValue v = e.score(in);
    r.warnings.insert(r.warnings.end(), v.warnings.begin(), v.warnings.end());
    r.notes.insert(r.notes.end(), v.notes.begin(), v.notes.end());
    r.values[e.name] = std::move(v);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Score score_samples(const sample::Sampler& s, int64_t n, const metrics::FeatureNet& net, const Reference& ref,
                    const MetricSet& m, bool quantize, std::function<metrics::MetricValue()> samples_classifier) {
  metrics::check_same_net(ref.stats, net.identity(), "the reference");
  const auto t0 = std::chrono::steady_clock::now();
  const auto items = sample::all_classes_plan(s.n_classes(), n);
  metrics::Features f =
      metrics::extract_features(net, sample::sample_batches(s, items, net, quantize), wants_logits(net, m));
  std::vector<int64_t> y;
  for (const auto& it : items) y.push_back(it.cls);
  f.labels = torch::tensor(y, torch::kLong);
  const double sample_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Score r = score_features(f, ref, net, m, std::move(samples_classifier));
  r.sample_seconds = sample_s;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

namespace {

std::string shown(const metrics::MetricValue& v) {
  if (!v.shown.empty()) return v.shown;
  std::ostringstream o;
  o << v.value;
  return o.str();
}

}  // namespace

std::string Score::label(const std::string& name) const { return name == "fid" ? distance : name; }

void print_score(const Score& s, std::ostream& out) {
  for (const auto& e : metrics::metric_registry())
    if (const auto it = s.values.find(e.name); it != s.values.end())
      out << s.label(e.name) << " " << shown(it->second) << "\n";
  for (const auto& w : s.warnings) out << "warning: " << w << "\n";
  for (const auto& w : s.notes) out << "note: " << w << "\n";
}

std::string score_line(const Score& s) {
  std::string line;
  for (const auto& e : metrics::metric_registry())
    if (const auto it = s.values.find(e.name); it != s.values.end() && std::isfinite(it->second.value))
      line += (line.empty() ? "" : ", ") + s.label(e.name) + " " + shown(it->second);
  return line;
}

}  // namespace hamgan::eval
