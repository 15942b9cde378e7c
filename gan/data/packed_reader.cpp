#include <algorithm>
#include <atomic>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "core/error.h"
#include "gan/data/packed.h"
#include "gan/data/sources.h"
#include "io/mapped_file.h"

namespace hamgan {

namespace {

class Packed : public Dataset {
 public:
  Packed(const std::string& file, int64_t resolution, int64_t channels)
      : file_(file), map_(std::make_unique<MappedFile>(file, false)) {
    const uint8_t* p = map_->data();
    size_t hb = 0;
    h_ = decode_packed_header(p, map_->size(), file, hb);
    l_ = packed_layout(h_, hb);
    if (map_->size() != l_.total)
      fail(file, ": wrong size: ", map_->size(), " bytes, the header describes ", l_.total,
           " (", h_.count, " images of ", h_.channels, "x", h_.resolution, "x", h_.resolution,
           ")");
    if (h_.data_checksum == 0)
      fail(file, ": incomplete (no data checksum; was `hamgan prepare` interrupted?)");
    verify();
    // One line for all of them, with their exact count: a warning per image would be repeated
    // by every rank between progress lines.
    // Every label in range where the file is opened: one outside it would index nothing at the
    // first step (training, statistics by class, `prepare` from this file).
    int64_t undecodable = 0;
    const int64_t classes = static_cast<int64_t>(h_.class_names.size());
    for (int64_t i = 0; i < h_.count; ++i) {
      int32_t y;
      std::memcpy(&y, p + l_.label_off + 4 * i, 4);
      if (y < -1 || y >= classes)
        fail(file, ": image ", i, " has label ", y, ", and the file has ", classes, " classes (labels 0..",
             classes - 1, ", or -1 for an image undecodable when prepared): a damaged or hand-made file; prepare it "
             "again with `hamgan prepare`");
      undecodable += y == -1;
    }
    if (undecodable > 0)
      std::cerr << "warning: " << file << ": " << undecodable << " of " << h_.count
                << " images were undecodable in the source when prepared; they are skipped\n";
    if (h_.resolution != resolution || h_.channels != channels)
      fail(file, ": holds ", h_.channels, "x", h_.resolution, "x", h_.resolution,
           " images, the config asks for ", channels, "x", resolution, "x", resolution,
           " (re-run `hamgan prepare` with --resolution/--channels)");
  }
  int64_t size() const override { return h_.count; }
  const std::vector<std::string>& class_names() const override { return h_.class_names; }
  int64_t resolution() const override { return h_.resolution; }
  int64_t channels() const override { return h_.channels; }
  int32_t label(int64_t index) const override {
    int32_t y;
    std::memcpy(&y, map_->data() + l_.label_off + 4 * index, 4);
    return y < 0 ? kLabelUndecodable : y;
  }
  bool get(int64_t index, uint8_t* pixels, int32_t& label) const override {
    const uint8_t* base = map_->data();
    std::memcpy(&label, base + l_.label_off + 4 * index, 4);
    if (label < 0) return false;  // undecodable when prepared: counted once at open
    std::memcpy(pixels, base + l_.pixel_off + index * l_.image_bytes, l_.image_bytes);
    return true;
  }

 private:
  // Every chunk's data against the table (in parallel), then the table against the header.
  void verify() {
    const uint8_t* base = map_->data();
    std::vector<uint64_t> table(l_.chunks);
    std::memcpy(table.data(), base + l_.table_off, 8 * l_.chunks);
    if (hash64(table.data(), 8 * table.size()) != h_.data_checksum)
      fail(file_, ": checksum mismatch in the chunk table");
    std::atomic<int64_t> next{0}, bad{-1};
    const int n = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (int t = 0; t < n; ++t)
      pool.emplace_back([&] {
        for (int64_t c; (c = next++) < l_.chunks && bad < 0;)
          if (packed_chunk_checksum(base, l_, c) != table[c]) bad = c;
      });
    for (auto& t : pool) t.join();
    if (bad >= 0)
      fail(file_, ": checksum mismatch in images ", bad * l_.chunk, "..",
           std::min(l_.count, (bad + 1) * l_.chunk) - 1, " (the file is corrupt)");
  }

  std::string file_;
  std::unique_ptr<MappedFile> map_;
  PackedHeader h_;
  PackedLayout l_;
};

}  // namespace

std::shared_ptr<Dataset> open_packed(const std::string& file, int64_t resolution,
                                     int64_t channels) {
  return std::make_shared<Packed>(file, resolution, channels);
}

}  // namespace hamgan
