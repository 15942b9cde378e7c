#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "gan/data/packed.h"
#include "gan/data/sources.h"
#include "gan/data/subset.h"

namespace fs = std::filesystem;

namespace hamgan {

DataFormat detect_format(const std::string& path) {
  if (!fs::exists(path)) fail("data path '", path, "': does not exist");
  if (fs::is_regular_file(path)) {
    char magic[8] = {};
    std::ifstream(path, std::ios::binary).read(magic, 8);
    if (std::memcmp(magic, kPackedMagic, 8) == 0) return DataFormat::Packed;
    fail("data path '", path, "': a file that is not a packed dataset (wrong magic)");
  }
  if (fs::exists(path + "/train-images-idx3-ubyte.gz")) return DataFormat::Fmnist;
  if (fs::exists(path + "/data_batch_1.bin") ||
      fs::exists(path + "/cifar-10-batches-bin/data_batch_1.bin"))
    return DataFormat::Cifar10;
  return DataFormat::Folder;
}

DataFormat resolve_format(DataFormat format, const std::string& path) {
  return format == DataFormat::Auto ? detect_format(path) : format;
}

int64_t default_channels(DataFormat resolved_format) { return resolved_format == DataFormat::Fmnist ? 1 : 3; }

std::shared_ptr<Dataset> open_dataset(const DataConfig& data, int64_t resolution,
                                      int64_t channels) {
  if (resolution < 8 || resolution > 1024)
    fail("model.resolution ", resolution, ": expected 8..1024 for a dataset");
  if (channels != 1 && channels != 3)
    fail("model.image_channels ", channels, ": expected 1 or 3");
  std::shared_ptr<Dataset> d;
  switch (resolve_format(data.format, data.path)) {
    case DataFormat::Fmnist: d = open_fmnist(data.path, resolution, channels); break;
    case DataFormat::Cifar10: d = open_cifar10(data.path, resolution, channels); break;
    case DataFormat::Folder: d = open_folder(data.path, resolution, channels); break;
    case DataFormat::Packed: d = open_packed(data.path, resolution, channels); break;
    case DataFormat::Auto: throw std::logic_error("resolve_format returned auto");
  }
  if (data.limit <= 0) return d;
  if (data.limit > d->size())
    fail("data.limit ", data.limit, ": ", data.path, " has only ", d->size(), " images; expected at most that (0: all)");
  Subset s = choose_subset(*d, data.limit, /*seed=*/0);
  return subset_dataset(std::move(d), std::move(s));
}

}  // namespace hamgan
