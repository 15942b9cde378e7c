#include "gan/sample/sample_batches.h"

#include <algorithm>
#include <memory>

namespace hamgan::sample {

torch::Tensor to_unit(const torch::Tensor& images, bool quantize) {
  if (quantize) return to_uint8(images).to(torch::kFloat).div(255);
  return images.to(torch::kCPU, torch::kFloat).add(1).div(2).clamp(0, 1);
}

metrics::PreparedBatches sample_batches(const Sampler& s, const std::vector<SampleItem>& items,
                                    const metrics::FeatureNet& net, bool quantize) {
  auto next = std::make_shared<size_t>(0);
  return [&s, &items, &net, quantize, next]() -> torch::Tensor {
    if (*next >= items.size()) return {};
    const size_t b = *next, e = std::min(items.size(), b + static_cast<size_t>(s.options().batch));
    *next = e;
    const std::vector<SampleItem> part(items.begin() + b, items.begin() + e);
    torch::InferenceMode guard;
    return net.prepare(to_unit(s.generate(part), quantize));
  };
}

}  // namespace hamgan::sample
