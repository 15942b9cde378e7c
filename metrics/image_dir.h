// PNG/JPEG images from a directory (ImageFolder class subdirectories or flat), decoded with
// stb_image on worker threads and prepared for the Inception net while the previous batch runs.
#pragma once
#include <string>
#include <vector>

#include "metrics/extract.h"

namespace hamgan::metrics {

// Sorted paths of *.png / *.jpg / *.jpeg under dir (recursive); at most n when n > 0.
std::vector<std::string> list_images(const std::string& dir, int64_t n = 0);
// [C, H, W] float in [0, 1]; C = 1 (gray) or 3 (RGB; alpha dropped).
torch::Tensor decode_image(const std::string& path);
// ImageFolder classes of `files` (from list_images(dir)), [N] int64: a file's class is its
// top-level subdirectory's number when every subdirectory is named by a non-negative integer
// (as `hamgan sample` writes them: 000, 003, ...), else that subdirectory's index among the
// sorted subdirectories (torchvision's ImageFolder). Undefined when some file lies directly
// in dir (a flat directory has no classes).
torch::Tensor folder_labels(const std::string& dir, const std::vector<std::string>& files);
// Batches of net.prepare(image) over the files, decoded by `workers` threads, one batch ahead.
BatchSource image_batches(const std::vector<std::string>& files, const FeatureNet& net, int64_t batch,
                          int workers);

}  // namespace hamgan::metrics
