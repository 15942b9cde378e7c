#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "gan/data/sources.h"
#include "gan/data/test_split.h"
#include "io/image.h"

namespace fs = std::filesystem;

namespace hamgan {

namespace {

constexpr size_t kRecord = 1 + 3 * 32 * 32;  // label byte + R, G, B planes of 32x32

class Cifar10 : public Dataset {
 public:
  std::vector<std::string> source_files() const override { return files_; }
  Cifar10(const std::vector<std::string>& files, std::vector<std::string> names,
          int64_t resolution, int64_t channels)
      : res_(resolution), ch_(channels), names_(std::move(names)), files_(files) {
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      if (!in) fail(f, ": cannot open");
      std::vector<char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (buf.empty() || buf.size() % kRecord != 0)
        fail(f, ": size ", buf.size(), " is not a multiple of the ", kRecord,
             "-byte CIFAR-10 record");
      for (size_t off = 0; off < buf.size(); off += kRecord) {
        const auto label = static_cast<uint8_t>(buf[off]);
        if (label >= names_.size())
          fail(f, ": label ", int(label), " at record ", off / kRecord, " >= ", names_.size());
        labels_.push_back(label);
        data_.insert(data_.end(), buf.begin() + off + 1, buf.begin() + off + kRecord);
      }
    }
  }
  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  const std::vector<std::string>& class_names() const override { return names_; }
  int64_t resolution() const override { return res_; }
  int64_t channels() const override { return ch_; }
  int32_t label(int64_t index) const override { return labels_[static_cast<size_t>(index)]; }
  bool get(int64_t index, uint8_t* pixels, int32_t& label) const override {
    const uint8_t* src = data_.data() + index * 3072;
    label = labels_[index];
    Image im;  // planar -> interleaved
    im.width = im.height = 32;
    im.channels = 3;
    im.pixels.resize(3072);
    for (int i = 0; i < 1024; ++i)
      for (int c = 0; c < 3; ++c) im.pixels[i * 3 + c] = src[c * 1024 + i];
    fit_to(im, static_cast<int>(res_), static_cast<int>(ch_), pixels);
    return true;
  }

 private:
  int64_t res_, ch_;
  std::vector<std::string> names_;
  std::vector<uint8_t> data_;
  std::vector<uint8_t> labels_;
  std::vector<std::string> files_;
};

}  // namespace

std::shared_ptr<Dataset> open_cifar10(const std::string& path, int64_t resolution,
                                      int64_t channels) {
  return open_cifar10_split(path, resolution, channels, false);
}

std::shared_ptr<Dataset> open_cifar10_split(const std::string& path, int64_t resolution,
                                            int64_t channels, bool test) {
  const std::string prefix = test ? "test_batch" : "data_batch_";
  std::string dir = path;
  if (fs::is_directory(dir + "/cifar-10-batches-bin")) dir += "/cifar-10-batches-bin";
  if (!fs::is_directory(dir))
    fail("data.path '", path, "': no such directory (expected CIFAR-10 data_batch_*.bin)");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && e.path().extension() == ".bin")
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) fail("data.path '", dir, "': no ", prefix, "*.bin files (CIFAR-10 binary)");
  std::vector<std::string> names;
  std::ifstream meta(dir + "/batches.meta.txt");
  for (std::string line; std::getline(meta, line);)
    if (!line.empty()) names.push_back(line);
  if (names.empty())
    names = {"airplane", "automobile", "bird", "cat", "deer",
             "dog",      "frog",       "horse", "ship", "truck"};
  return std::make_shared<Cifar10>(files, names, resolution, channels);
}

}  // namespace hamgan
