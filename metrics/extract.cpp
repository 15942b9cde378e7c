#include "metrics/extract.h"


#include "core/error.h"
#include "core/phase_progress.h"

namespace hamgan::metrics {

Features extract_features(const FeatureNet& net, const PreparedBatches& next, bool want_logits, bool progress) {
  std::vector<torch::Tensor> pools, logits;
  // Minutes for 50k images on a CPU: a line every few seconds once it takes long.
  PhaseProgress line(progress ? PhaseProgress::Say(PhaseProgress::to_stderr) : PhaseProgress::Say(), "feature extraction", 0,
                     "images");
  for (torch::Tensor b = next(); b.defined(); b = next()) {
    const FeatureOutput o = net.features(b, want_logits);
    pools.push_back(o.pool.to(torch::kCPU, torch::kFloat));
    if (want_logits) logits.push_back(o.logits.to(torch::kCPU, torch::kFloat));
    line.add(b.size(0));
  }
  if (pools.empty()) fail("feature extraction: the image source gave no images");
  Features f;
  f.pool = torch::cat(pools);
  if (want_logits) f.logits = torch::cat(logits);
  return f;
}

}  // namespace hamgan::metrics
