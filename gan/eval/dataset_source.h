// Any training data source (fmnist, cifar10, folder, packed: gan/data) as Inception batches,
// for reference statistics and real features: the first n images in dataset order.
#pragma once
#include <memory>

#include "gan/data/dataset.h"
#include "metrics/extract.h"

namespace hamgan::eval {

// The returned source keeps `data` alive and references `net`. n <= 0: all images.
metrics::PreparedBatches dataset_batches(std::shared_ptr<Dataset> data, int64_t n, const metrics::InceptionExtractor& net,
                                     int64_t batch, int workers);

}  // namespace hamgan::eval
