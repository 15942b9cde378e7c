// Image files (io/decode.h: list_images) decoded on worker threads and prepared for the
// feature network while the previous batch runs.
#pragma once
#include <string>
#include <vector>

#include "metrics/extract.h"

namespace hamgan::metrics {

// Batches of net.prepare(image) over the files, decoded by `workers` threads, one batch ahead.
PreparedBatches image_batches(const std::vector<std::string>& files, const FeatureNet& net, int64_t batch,
                              int workers);

}  // namespace hamgan::metrics
