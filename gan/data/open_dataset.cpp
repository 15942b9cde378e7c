#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "gan/data/packed.h"
#include "gan/data/sources.h"

namespace fs = std::filesystem;

namespace hamgan {

std::string detect_format(const std::string& path) {
  if (!fs::exists(path)) fail("data path '", path, "': does not exist");
  if (fs::is_regular_file(path)) {
    char magic[8] = {};
    std::ifstream(path, std::ios::binary).read(magic, 8);
    if (std::memcmp(magic, kPackedMagic, 8) == 0) return "packed";
    fail("data path '", path, "': a file that is not a packed dataset (wrong magic)");
  }
  if (fs::exists(path + "/train-images-idx3-ubyte.gz")) return "fmnist";
  if (fs::exists(path + "/data_batch_1.bin") ||
      fs::exists(path + "/cifar-10-batches-bin/data_batch_1.bin"))
    return "cifar10";
  return "folder";
}

std::shared_ptr<Dataset> open_dataset(const DataConfig& data, int64_t resolution,
                                      int64_t channels) {
  if (resolution < 8 || resolution > 1024)
    fail("model.resolution ", resolution, ": expected 8..1024 for a dataset");
  if (channels != 1 && channels != 3)
    fail("model.image_channels ", channels, ": expected 1 or 3");
  const std::string f =
      (data.format.empty() || data.format == "auto") ? detect_format(data.path) : data.format;
  if (f == "fmnist") return open_fmnist(data.path, resolution, channels);
  if (f == "cifar10") return open_cifar10(data.path, resolution, channels);
  if (f == "folder") return open_folder(data.path, resolution, channels);
  if (f == "packed") return open_packed(data.path, resolution, channels);
  fail("data.format '", f, "': expected fmnist, cifar10, folder or packed");
}

}  // namespace hamgan
