// Image files (io/decode.h: list_images) decoded on worker threads and prepared for the
// feature network while the previous batch runs; and which files of a folder of generated
// images are samples, of which class.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "metrics/extract.h"

namespace hamgan::metrics {

// The images of a folder of generated samples (`hamgan fid --fake DIR`), as `hamgan sample`
// writes it, DIR/<class number>/<image> (classes from the folder's number: 008/ is class 8,
// whatever other folders there are), or flat, DIR/<image> (no classes). Entries whose name
// starts with '.' (.ipynb_checkpoints/, an editor's .x.png) are no samples: skipped, and those
// holding images listed in `skipped`. Errors (hamgan::Error) name the folder and the entries:
// a folder holding images whose name is not a class number (its images would be scored as
// samples of no class), loose images beside class folders, no image at all.
struct SampleFolder {
  std::vector<std::string> files;    // sorted paths
  torch::Tensor labels;              // [N] int64 class numbers; undefined for a flat folder
  std::vector<std::string> skipped;  // hidden entries with images, "name/ (3 images)"
};
SampleFolder sample_folder(const std::string& dir);

// Batches of net.prepare(image) over the files, decoded by `workers` threads, one batch ahead.
PreparedBatches image_batches(const std::vector<std::string>& files, const FeatureNet& net, int64_t batch,
                              int workers);

}  // namespace hamgan::metrics
