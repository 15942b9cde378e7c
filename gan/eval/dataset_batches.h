// Any training data source (fmnist, cifar10, folder, packed: gan/data) as Inception batches,
// for reference statistics and real features: the images `indices` (gan/data/subset.h).
#pragma once
#include <memory>
#include <vector>

#include "gan/data/dataset.h"
#include "metrics/extract.h"

namespace hamgan::eval {

// The returned batches keep `data` alive and reference `net`. indices empty: all images. When
// `labels` is given, each batch's labels are appended to it. Images that cannot be decoded are
// left out (get() warns about each) and counted in `skipped` when given.
metrics::PreparedBatches dataset_batches(std::shared_ptr<Dataset> data, std::vector<int64_t> indices,
                                         const metrics::FeatureNet& net,
                                         int64_t batch, int workers,
                                         std::shared_ptr<std::vector<int64_t>> labels = nullptr,
                                         std::shared_ptr<int64_t> skipped = nullptr);

}  // namespace hamgan::eval
