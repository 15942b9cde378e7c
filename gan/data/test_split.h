// The test split of a data source, for measuring a classifier on images it was not trained
// on (`hamgan classifier train`): Fashion-MNIST's t10k-* files, CIFAR-10's test_batch.bin.
#pragma once
#include <memory>
#include <string>

#include "gan/data/dataset.h"

namespace hamgan {

// null when the source has none (folders, packed files, or the files are absent).
std::shared_ptr<Dataset> open_test_split(const DataConfig& data, int64_t resolution, int64_t channels);

// open_fmnist / open_cifar10 (gan/data/sources.h) of the training (test = false) or test files.
std::shared_ptr<Dataset> open_fmnist_split(const std::string& dir, int64_t resolution, int64_t channels, bool test);
std::shared_ptr<Dataset> open_cifar10_split(const std::string& path, int64_t resolution, int64_t channels, bool test);

}  // namespace hamgan
