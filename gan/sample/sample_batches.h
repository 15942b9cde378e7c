// Samples straight into feature extraction (metrics::extract_features) without files: each
// batch is generated, mapped from [-1, 1] to [0, 1] and prepared for the Inception net.
// With quantize (the default of the CLI) images are first rounded to 8 bit exactly as
// `hamgan sample` writes them, so FID of --checkpoint equals FID of the written PNGs.
#pragma once
#include <vector>

#include "gan/sample/sampler.h"
#include "metrics/extract.h"

namespace hamgan::sample {

// [-1, 1] images -> [0, 1] (through uint8 when quantize).
torch::Tensor to_unit(const torch::Tensor& images, bool quantize);
// The returned batches keep references to `s`, `items` and `net`: they must outlive them.
metrics::PreparedBatches sample_batches(const Sampler& s, const std::vector<SampleItem>& items,
                                    const metrics::FeatureNet& net, bool quantize);

}  // namespace hamgan::sample
