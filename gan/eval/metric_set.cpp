#include "gan/eval/metric_set.h"

#include <sstream>

#include "core/error.h"

namespace hamgan::eval {

MetricSet parse_metrics(const std::string& list, const std::string& key) {
  const char* choices = "expected a comma list of fid, is, kid, pr, dc, ifid, cas";
  // An empty list would silently mean "fid only": say so instead.
  if (list.find_first_not_of(" \t") == std::string::npos) fail(key, " '", list, "': no metric; ", choices);
  MetricSet m;
  std::stringstream ss(list);
  for (std::string w; std::getline(ss, w, ',');) {
    if (w == "fid") continue;  // always
    if (w == "is") m.is = true;
    else if (w == "kid") m.kid = true;
    else if (w == "pr") m.pr = true;
    else if (w == "dc") m.dc = true;
    else if (w == "ifid") m.ifid = true;
    else if (w == "cas") m.cas = true;
    else if (w.empty()) fail(key, " '", list, "': an empty metric (two commas, or one at an end); ", choices);
    else fail(key, " '", list, "': unknown metric '", w, "'; ", choices);
  }
  if (!list.empty() && list.back() == ',') fail(key, " '", list, "': an empty metric (a comma at the end); ", choices);
  return m;
}

MetricSet every_metric() { return {true, true, true, true, true, false}; }

std::string metrics_text(const MetricSet& m) {
  std::string s = "fid";
  for (const auto& [on, name] : {std::pair{m.is, "is"}, {m.kid, "kid"}, {m.pr, "pr"}, {m.dc, "dc"}, {m.ifid, "ifid"}, {m.cas, "cas"}})
    if (on) s += std::string(",") + name;
  return s;
}

void check_metrics_possible(const MetricSet& m, const MetricScope& s) {
  if (m.is && s.classifier)
    fail(s.key, " is: the Inception Score needs Inception's 1000 ImageNet logits; with a domain classifier (",
         s.key == "--metrics" ? "--features" : "train.eval_features",
         ") class accuracy is reported instead. Drop 'is', or score with Inception");
  if (m.needs_real_features() && s.real_is_stats) {
    MetricSet asked = m;
    asked.is = asked.cas = false;
    fail(s.key, " ", metrics_text(asked).substr(4), ": these compare real and fake image features, and ", s.real_key,
         " ", s.real, " holds only statistics (mean and covariance). Give ", s.real_key,
         " as an image directory or data source, or drop them");
  }
  if (m.cas && !s.no_cas_why.empty()) fail(s.key, " cas: ", s.no_cas_why);
}

MetricSet possible_metrics(MetricSet m, const MetricScope& s) {
  if (s.classifier) m.is = false;
  if (s.real_is_stats) m.kid = m.pr = m.dc = m.ifid = false;
  if (!s.no_cas_why.empty()) m.cas = false;
  return m;
}

}  // namespace hamgan::eval
