#include "gan/data/synthetic.h"

#include "core/error.h"
#include "core/splitmix.h"

namespace hamgan {

namespace {
uint64_t mix(uint64_t x) { return splitmix64(x); }
}  // namespace

SyntheticDataset::SyntheticDataset(int64_t size, int64_t resolution, int64_t channels,
                                   int64_t classes, uint64_t seed)
    : size_(size), resolution_(resolution), channels_(channels), seed_(seed) {
  if (size < 1) fail("synthetic dataset: expected size >= 1, got ", size);
  if (resolution < 1 || channels < 1)
    fail("synthetic dataset: expected positive resolution and channels, got ", resolution,
         " and ", channels);
  if (classes < 1) fail("synthetic dataset: expected >= 1 classes, got ", classes);
  for (int64_t c = 0; c < classes; ++c) names_.push_back("class" + std::to_string(c));
}

int32_t SyntheticDataset::label(int64_t index) const {
  if (index < 0 || index >= size_)
    fail("synthetic dataset: index ", index, " out of range [0, ", size_, ")");
  return static_cast<int32_t>(mix(seed_ ^ mix(static_cast<uint64_t>(index))) % names_.size());
}

bool SyntheticDataset::get(int64_t index, uint8_t* pixels, int32_t& label) const {
  label = this->label(index);
  const uint64_t h = mix(seed_ ^ mix(static_cast<uint64_t>(index)));
  // A class-dependent stripe pattern plus per-pixel hash noise: learnable, yet cheap.
  const int64_t r = resolution_, period = 2 + label % 7;
  for (int64_t c = 0; c < channels_; ++c)
    for (int64_t y = 0; y < r; ++y)
      for (int64_t x = 0; x < r; ++x) {
        const uint64_t n = mix(h + static_cast<uint64_t>((c * r + y) * r + x));
        const int base = ((x + y + label) / period) % 2 ? 192 : 64;
        pixels[(c * r + y) * r + x] = static_cast<uint8_t>(base + static_cast<int>(n & 31) - 16);
      }
  return true;
}

}  // namespace hamgan
