// Labelled image datasets and the training loader. A Dataset yields uint8 CHW images at
// the configured resolution and channel count; the Loader batches them on worker threads
// into float tensors in [-1, 1] with int64 labels.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gan/config/config.h"

namespace hamgan {

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual const std::vector<std::string>& class_names() const = 0;
  int64_t num_classes() const { return static_cast<int64_t>(class_names().size()); }
  virtual int64_t resolution() const = 0;
  virtual int64_t channels() const = 0;
  // Writes image `index` as channels x resolution x resolution uint8 (CHW) into `pixels`
  // and returns its label. Returns false (after one warning naming the file; a packed file
  // warns once at open with the count) when the
  // image cannot be decoded; the loader then skips it and counts it.
  virtual bool get(int64_t index, uint8_t* pixels, int32_t& label) const = 0;
  // Image `index`'s label without decoding it: kLabelUnknown where a source cannot tell (subsets
  // are then uniform instead of class-balanced, gan/data/subset.h), kLabelUndecodable for an
  // image known to be undecodable (a packed file records them).
  static constexpr int32_t kLabelUnknown = -1, kLabelUndecodable = -2;
  virtual int32_t label(int64_t) const { return kLabelUnknown; }
  // The files the images are read from (image files, or the archives that hold them), for a
  // fingerprint of the source as it is now (`prepare`: a source changed since a packed file or
  // its .partial was written is not mistaken for the same). Empty: a source not on disk.
  virtual std::vector<std::string> source_files() const { return {}; }
};

// Opens the configured source (data.format / data.path), converting to `resolution` and
// `channels`. Missing paths, empty class directories, bad packed files: hamgan::Error.
std::shared_ptr<Dataset> open_dataset(const DataConfig& data, int64_t resolution, int64_t channels);

struct Batch {
  torch::Tensor images;  // B x C x R x R float32 in [-1, 1]
  torch::Tensor labels;  // B int64
};

struct LoaderOptions {
  int64_t batch_size = 64;
  uint64_t seed = 0;      // per-epoch shuffle from (seed, epoch)
  int64_t workers = 2;
  int64_t prefetch = 4;   // bounded queue of ready batches
  bool flip = true;       // random horizontal flip
  // > 1: every batch is runs of this many images of one class (gan/data/class_runs.h); needs
  // the source's labels up front and a batch_size that is a multiple of it.
  int64_t class_group = 1;
  int64_t rank = 0, world_size = 1;  // each rank reads its own shard of every epoch
  // Page-locked batches, so the trainer's .to(cuda, non_blocking) copies run asynchronously
  // (needs a CUDA LibTorch and a GPU; the trainer sets it when training on CUDA).
  bool pin_memory = false;
};

// Where the loader stands, so a resumed run sees exactly the batches it would have.
struct LoaderState {
  int64_t epoch = 0;
  int64_t batch_in_epoch = 0;
};

class Loader {
 public:
  Loader(std::shared_ptr<Dataset> data, LoaderOptions opt, LoaderState start = {});
  ~Loader();
  Batch next();               // drop_last: every batch is full
  LoaderState state() const;  // the position of the next batch next() returns
  int64_t skipped() const;    // undecodable images skipped so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hamgan
