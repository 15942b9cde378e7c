// Which metrics `hamgan fid` computes (`--metrics fid,is,kid,pr,dc,ifid,cas`; `--all`: those
// of all but cas that the feature network and the reference allow). FID always; IS from
// Inception's logits (a domain classifier gives class accuracy instead); KID, precision/recall
// (pr), density/coverage (dc) and intra-class FID (ifid) compare with the real images' features,
// so they need --real to be images or a data source, not an .npz; the classification accuracy
// score (cas, gan/eval/cas.h) trains a classifier on samples (minutes), for --checkpoint only.
// A metric asked for that cannot be computed where it is asked is an error before anything is
// read, naming the flag or config key that asked for it.
#pragma once
#include <string>

namespace hamgan::eval {

struct MetricSet {
  bool is = false, kid = false, pr = false, dc = false, ifid = false, cas = false;
  bool needs_real_features() const { return kid || pr || dc || ifid; }
};

// "fid,kid,pr" -> the set. Errors name `key` (the flag or config key the list came from): an
// unknown metric, an empty list or an empty word.
MetricSet parse_metrics(const std::string& list, const std::string& key = "--metrics");
MetricSet every_metric();
// "fid,is,kid,..." of a set, for messages.
std::string metrics_text(const MetricSet& m);

// What a score can compute, and the names of what asked.
struct MetricScope {
  std::string key = "--metrics";  // the metric list's flag or config key
  std::string real_key = "--real", real;  // the reference's flag or key, and its value
  bool real_is_stats = false;     // an .npz: statistics only, no features to compare
  bool classifier = false;        // a domain classifier: no Inception Score (class accuracy instead)
  std::string no_cas_why;         // non-empty: cas cannot be computed here, and why
};
// Error naming scope.key (and the reference's flag or key where it is the reason) for the first
// metric of `m` that the scope cannot compute.
void check_metrics_possible(const MetricSet& m, const MetricScope& scope);
// The metrics of `m` the scope can compute (what `--all` means).
MetricSet possible_metrics(MetricSet m, const MetricScope& scope);

}  // namespace hamgan::eval
