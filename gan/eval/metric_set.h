// Which metrics `hamgan fid` computes (`--metrics fid,is,kid,pr,dc,ifid,cas`; `--all`: all but
// cas). FID always; IS from Inception's logits (a domain classifier gives class accuracy
// instead); KID, precision/recall (pr), density/coverage (dc) and intra-class FID (ifid) compare
// with the real images' features, so they need --real to be images or a data source, not an
// .npz; the classification accuracy score (cas, gan/eval/cas.h) trains a classifier on samples
// (minutes), for --checkpoint only.
#pragma once
#include <string>

namespace hamgan::eval {

struct MetricSet {
  bool is = false, kid = false, pr = false, dc = false, ifid = false, cas = false;
  bool needs_real_features() const { return kid || pr || dc || ifid; }
};

// "fid,kid,pr" -> the set; an unknown word is an error naming the choices.
MetricSet parse_metrics(const std::string& list);
MetricSet every_metric();
// "fid,is,kid,..." of a set, for messages.
std::string metrics_text(const MetricSet& m);

}  // namespace hamgan::eval
