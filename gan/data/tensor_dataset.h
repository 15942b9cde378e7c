// Images already in memory (uint8 [N, C, R, R] and int64 labels [N]) as a Dataset: generated
// samples for the classification accuracy score (gan/eval/cas.h), or any image batch a caller
// holds.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "gan/data/dataset.h"

namespace hamgan {

class TensorDataset : public Dataset {
 public:
  // class_names empty: "0", "1", ... up to the largest label.
  TensorDataset(torch::Tensor images, torch::Tensor labels, std::vector<std::string> class_names = {});
  int64_t size() const override { return images_.size(0); }
  const std::vector<std::string>& class_names() const override { return names_; }
  int64_t resolution() const override { return images_.size(2); }
  int64_t channels() const override { return images_.size(1); }
  int32_t label(int64_t index) const override;
  bool get(int64_t index, uint8_t* pixels, int32_t& label) const override;

 private:
  torch::Tensor images_, labels_;
  std::vector<std::string> names_;
};

}  // namespace hamgan
