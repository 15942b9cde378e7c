#include "gan/eval/metric_set.h"

#include <sstream>

#include "core/error.h"

namespace hamgan::eval {

MetricSet parse_metrics(const std::string& list) {
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
    else fail("--metrics '", list, "': unknown metric '", w, "'; expected a comma list of fid, is, kid, pr, dc, ifid, cas");
  }
  return m;
}

MetricSet every_metric() { return {true, true, true, true, true, false}; }

std::string metrics_text(const MetricSet& m) {
  std::string s = "fid";
  for (const auto& [on, name] : {std::pair{m.is, "is"}, {m.kid, "kid"}, {m.pr, "pr"}, {m.dc, "dc"}, {m.ifid, "ifid"}, {m.cas, "cas"}})
    if (on) s += std::string(",") + name;
  return s;
}

}  // namespace hamgan::eval
