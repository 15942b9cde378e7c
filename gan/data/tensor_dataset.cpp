#include "gan/data/tensor_dataset.h"

#include <cstring>

#include "core/error.h"

namespace hamgan {

TensorDataset::TensorDataset(torch::Tensor images, torch::Tensor labels, std::vector<std::string> class_names)
    : images_(images.to(torch::kCPU).contiguous()), labels_(labels.to(torch::kCPU, torch::kLong).contiguous()),
      names_(std::move(class_names)) {
  if (images_.dim() != 4 || images_.scalar_type() != torch::kUInt8 || images_.size(2) != images_.size(3) ||
      (images_.size(1) != 1 && images_.size(1) != 3))
    fail("tensor dataset: images ", images_.sizes(), " of ", images_.scalar_type(),
         "; expected uint8 [N, 1 or 3, R, R]");
  if (labels_.dim() != 1 || labels_.size(0) != images_.size(0) || images_.size(0) == 0)
    fail("tensor dataset: labels ", labels_.sizes(), " for ", images_.size(0), " images; expected one per image");
  if (labels_.min().item<int64_t>() < 0) fail("tensor dataset: negative label");
  const int64_t k = labels_.max().item<int64_t>() + 1;
  if (names_.empty())
    for (int64_t c = 0; c < k; ++c) names_.push_back(std::to_string(c));
  if (static_cast<int64_t>(names_.size()) < k)
    fail("tensor dataset: label ", k - 1, " but ", names_.size(), " class names");
}

int32_t TensorDataset::label(int64_t index) const { return static_cast<int32_t>(labels_.data_ptr<int64_t>()[index]); }

bool TensorDataset::get(int64_t index, uint8_t* pixels, int32_t& label) const {
  if (index < 0 || index >= size()) fail("tensor dataset: index ", index, " out of range [0, ", size(), ")");
  const int64_t bytes = images_[0].numel();
  std::memcpy(pixels, images_.data_ptr<uint8_t>() + index * bytes, static_cast<size_t>(bytes));
  label = this->label(index);
  return true;
}

}  // namespace hamgan
