// A deterministic stand-in Dataset for tests and benchmarks: image `index` and its label
// are a cheap hash of (index, seed), so any process regenerates the same data.
#pragma once
#include "gan/data/dataset.h"

namespace hamgan {

class SyntheticDataset : public Dataset {
 public:
  SyntheticDataset(int64_t size, int64_t resolution, int64_t channels, int64_t classes,
                   uint64_t seed = 0);
  int64_t size() const override { return size_; }
  const std::vector<std::string>& class_names() const override { return names_; }
  int64_t resolution() const override { return resolution_; }
  int64_t channels() const override { return channels_; }
  bool get(int64_t index, uint8_t* pixels, int32_t& label) const override;
  int32_t label(int64_t index) const override;

 private:
  int64_t size_, resolution_, channels_;
  uint64_t seed_;
  std::vector<std::string> names_;
};

}  // namespace hamgan
