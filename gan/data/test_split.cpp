#include <filesystem>

#include "gan/data/sources.h"
#include "gan/data/test_split.h"

namespace hamgan {

namespace fs = std::filesystem;

std::shared_ptr<Dataset> open_test_split(const DataConfig& data, int64_t resolution, int64_t channels) {
  const DataFormat f = resolve_format(data.format, data.path);
  if (f == DataFormat::Fmnist && fs::exists(data.path + "/t10k-images-idx3-ubyte.gz"))
    return open_fmnist_split(data.path, resolution, channels, true);
  if (f == DataFormat::Cifar10 && (fs::exists(data.path + "/test_batch.bin") ||
                         fs::exists(data.path + "/cifar-10-batches-bin/test_batch.bin")))
    return open_cifar10_split(data.path, resolution, channels, true);
  return nullptr;
}

}  // namespace hamgan
