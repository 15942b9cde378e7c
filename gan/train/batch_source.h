// Where the trainer's real batches come from. The multi-threaded Loader (gan/data) is
// the production source; DatasetSource reads any Dataset on the calling thread (tests,
// benchmarks on SyntheticDataset). Both report a LoaderState so a resume continues at
// the same batch.
#pragma once
#include <memory>

#include "gan/data/dataset.h"

namespace hamgan {

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual Batch next() = 0;                 // images B x C x R x R in [-1, 1], labels B int64
  virtual LoaderState state() const = 0;    // position of the batch next() returns
};

// Single-threaded: epoch e visits a permutation drawn from (seed, e); drop_last; no flip.
class DatasetSource : public BatchSource {
 public:
  DatasetSource(std::shared_ptr<Dataset> data, int64_t batch_size, uint64_t seed,
                LoaderState start = {});
  Batch next() override;
  LoaderState state() const override { return state_; }

 private:
  void permute();
  std::shared_ptr<Dataset> data_;
  int64_t batch_size_;
  uint64_t seed_;
  LoaderState state_;
  int64_t perm_epoch_ = -1;
  torch::Tensor perm_;
};

// The gan/data Loader behind the BatchSource interface.
class LoaderSource : public BatchSource {
 public:
  LoaderSource(std::shared_ptr<Dataset> data, LoaderOptions opt, LoaderState start)
      : loader_(std::move(data), opt, start) {}
  Batch next() override { return loader_.next(); }
  LoaderState state() const override { return loader_.state(); }

 private:
  Loader loader_;
};

}  // namespace hamgan
