// The dataset sources behind open_dataset(), one per file: fmnist.cpp, cifar10.cpp,
// folder.cpp, packed_reader.cpp.
#pragma once
#include <memory>
#include <string>

#include "gan/data/dataset.h"

namespace hamgan {

// Debian's Fashion-MNIST (train-{images,labels}-*-ubyte.gz in `dir`): 28x28 is padded with
// black to 32 (2 pixels each side), resized (antialiased bilinear) to other resolutions.
std::shared_ptr<Dataset> open_fmnist(const std::string& dir, int64_t resolution,
                                     int64_t channels);
// CIFAR-10 binary batches data_batch_*.bin in `dir` (or dir/cifar-10-batches-bin).
std::shared_ptr<Dataset> open_cifar10(const std::string& dir, int64_t resolution,
                                      int64_t channels);
// ImageFolder: one directory per class (sorted by name), JPEG/PNG/BMP files.
std::shared_ptr<Dataset> open_folder(const std::string& dir, int64_t resolution,
                                     int64_t channels);
// A file written by `hamgan prepare`; its resolution and channels must match.
std::shared_ptr<Dataset> open_packed(const std::string& file, int64_t resolution,
                                     int64_t channels);

// Fmnist, Cifar10, Packed or Folder from what is at `path`; error if nothing is.
DataFormat detect_format(const std::string& path);
// `format` itself, or (Auto) detected from `path`.
DataFormat resolve_format(DataFormat format, const std::string& path);
// The channels a source of (resolved) `format` is read at unless asked otherwise: 1 for
// Fashion-MNIST, which is gray, 3 for the rest.
int64_t default_channels(DataFormat resolved_format);

}  // namespace hamgan
