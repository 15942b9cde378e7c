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
// Batches of net.prepare(image) over the files, decoded by `workers` threads, one batch ahead.
BatchSource image_batches(const std::vector<std::string>& files, const InceptionExtractor& net, int64_t batch,
                          int workers);

}  // namespace hamgan::metrics
