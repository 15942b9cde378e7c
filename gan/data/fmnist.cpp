#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include "core/error.h"
#include "gan/data/sources.h"
#include "gan/data/test_split.h"
#include "io/image.h"

namespace hamgan {

namespace {

uint32_t be32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
}

// More images than this in one IDX file is not Fashion-MNIST (60000 train, 10000 test).
constexpr uint32_t kMaxIdxItems = 1000000;

// Decompresses an IDX file, checking its header as soon as `header` bytes are in: `declared`
// validates it and returns the file's total size, and the stream is cut off (an error) the
// moment it holds more, so a gzip bomb stops after a few MB instead of filling memory.
std::vector<uint8_t> gunzip_idx(const std::string& path, size_t header,
                                const std::function<uint64_t(const uint8_t*)>& declared) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) fail(path, ": cannot open (expected a gzip'd IDX file)");
  std::vector<uint8_t> out;
  std::vector<uint8_t> buf(1 << 20);
  uint64_t limit = 0;
  bool known = false;
  for (;;) {
    const int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int code = 0;
      const std::string msg = gzerror(f, &code);
      gzclose(f);
      fail(path, ": gzip error: ", msg);
    }
    if (n == 0) break;
    out.insert(out.end(), buf.begin(), buf.begin() + n);
    if (!known && out.size() >= header) {
      try {
        limit = declared(out.data());
      } catch (...) {
        gzclose(f);
        throw;
      }
      known = true;
    }
    if (known && out.size() > limit) {
      gzclose(f);
      fail(path, ": decompresses to more than the ", limit, " bytes its IDX header declares");
    }
  }
  gzclose(f);
  return out;
}

class Fmnist : public Dataset {
 public:
  std::vector<std::string> source_files() const override { return files_; }
  Fmnist(const std::string& dir, int64_t resolution, int64_t channels, bool test)
      : res_(resolution), ch_(channels) {
    const std::string prefix = test ? "/t10k" : "/train";
    const std::string img = dir + prefix + "-images-idx3-ubyte.gz";
    const std::string lab = dir + prefix + "-labels-idx1-ubyte.gz";
    files_ = {img, lab};
    images_ = gunzip_idx(img, 16, [&](const uint8_t* h) -> uint64_t {
      if (be32(h) != 0x803) fail(img, ": not an IDX3 uint8 file (expected magic 0x00000803)");
      if (be32(h + 8) != 28 || be32(h + 12) != 28)
        fail(img, ": expected 28x28 images, the header says ", be32(h + 8), "x", be32(h + 12));
      if (be32(h + 4) > kMaxIdxItems)
        fail(img, ": the header declares ", be32(h + 4), " images; expected at most ", kMaxIdxItems);
      return 16 + uint64_t(be32(h + 4)) * 784;
    });
    if (images_.size() < 16 || be32(images_.data()) != 0x803)
      fail(img, ": not an IDX3 uint8 file (expected magic 0x00000803)");
    n_ = be32(images_.data() + 4);
    labels_ = gunzip_idx(lab, 8, [&](const uint8_t* h) -> uint64_t {
      if (be32(h) != 0x801) fail(lab, ": not an IDX1 uint8 file (expected magic 0x00000801)");
      if (be32(h + 4) != n_) fail(lab, ": expected ", n_, " labels, the header says ", be32(h + 4));
      return 8 + uint64_t(n_);
    });
    if (labels_.size() < 8 || be32(labels_.data()) != 0x801)
      fail(lab, ": not an IDX1 uint8 file (expected magic 0x00000801)");
    if (images_.size() != 16 + static_cast<size_t>(n_) * 784)
      fail(img, ": size ", images_.size(), " does not hold ", n_, " images of 28x28");
    if (be32(labels_.data() + 4) != n_ || labels_.size() != 8 + static_cast<size_t>(n_))
      fail(lab, ": expected ", n_, " labels");
    for (int64_t i = 0; i < n_; ++i)
      if (labels_[8 + i] > 9) fail(lab, ": label ", int(labels_[8 + i]), " at ", i, " > 9");
  }
  int64_t size() const override { return n_; }
  const std::vector<std::string>& class_names() const override { return names_; }
  int64_t resolution() const override { return res_; }
  int64_t channels() const override { return ch_; }
  int32_t label(int64_t index) const override { return labels_[8 + static_cast<size_t>(index)]; }
  bool get(int64_t index, uint8_t* pixels, int32_t& label) const override {
    const uint8_t* src = images_.data() + 16 + index * 784;
    label = labels_[8 + index];
    const size_t plane = static_cast<size_t>(res_ * res_);
    if (res_ == 32) {  // pad 2 each side with 0 (the background is black)
      std::memset(pixels, 0, plane);
      for (int y = 0; y < 28; ++y) std::memcpy(pixels + (y + 2) * 32 + 2, src + y * 28, 28);
      for (int64_t c = 1; c < ch_; ++c) std::memcpy(pixels + c * plane, pixels, plane);
      return true;
    }
    Image im;
    im.width = im.height = 28;
    im.channels = 1;
    im.pixels.assign(src, src + 784);
    fit_to(im, static_cast<int>(res_), static_cast<int>(ch_), pixels);
    return true;
  }

 private:
  int64_t res_, ch_, n_ = 0;
  std::vector<uint8_t> images_, labels_;
  std::vector<std::string> files_;
  std::vector<std::string> names_ = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                     "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
};

}  // namespace

std::shared_ptr<Dataset> open_fmnist(const std::string& dir, int64_t resolution,
                                     int64_t channels) {
  return open_fmnist_split(dir, resolution, channels, false);
}

std::shared_ptr<Dataset> open_fmnist_split(const std::string& dir, int64_t resolution,
                                           int64_t channels, bool test) {
  if (!std::filesystem::is_directory(dir))
    fail("data.path '", dir, "': no such directory (expected Fashion-MNIST IDX .gz files)");
  return std::make_shared<Fmnist>(dir, resolution, channels, test);
}

}  // namespace hamgan
