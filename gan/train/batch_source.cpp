#include "gan/train/batch_source.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/error.h"

namespace hamgan {

DatasetSource::DatasetSource(std::shared_ptr<Dataset> data, int64_t batch_size, uint64_t seed,
                             LoaderState start)
    : data_(std::move(data)), batch_size_(batch_size), seed_(seed), state_(start) {
  if (batch_size_ < 1 || batch_size_ > data_->size())
    fail("batch source: expected a batch size in [1, ", data_->size(),
         "] (the dataset size), got ", batch_size_);
}

void DatasetSource::permute() {
  if (perm_epoch_ == state_.epoch) return;
  auto gen = at::detail::createCPUGenerator(seed_ * 1000003ull + static_cast<uint64_t>(state_.epoch));
  perm_ = torch::randperm(data_->size(), gen, torch::kLong);
  perm_epoch_ = state_.epoch;
}

Batch DatasetSource::next() {
  if ((state_.batch_in_epoch + 1) * batch_size_ > data_->size()) {
    ++state_.epoch;
    state_.batch_in_epoch = 0;
  }
  permute();
  const int64_t c = data_->channels(), r = data_->resolution();
  torch::Tensor pixels = torch::empty({batch_size_, c, r, r}, torch::kUInt8);
  torch::Tensor labels = torch::empty({batch_size_}, torch::kLong);
  int64_t* label_out = labels.data_ptr<int64_t>();
  const int64_t* order = perm_.data_ptr<int64_t>() + state_.batch_in_epoch * batch_size_;
  for (int64_t i = 0; i < batch_size_; ++i) {
    int32_t label = 0;
    if (!data_->get(order[i], pixels[i].data_ptr<uint8_t>(), label))
      fail("batch source: image ", order[i], " cannot be decoded");
    label_out[i] = label;
  }
  ++state_.batch_in_epoch;
  return {pixels.to(torch::kFloat).div_(127.5).sub_(1.0), labels};
}

}  // namespace hamgan
