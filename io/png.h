// PNG output (stb_image_write) and the sample grid of the trainer.
#pragma once
#include <torch/torch.h>

#include <string>

namespace hamgan {

// `image`: H x W x C uint8 (C = 1, 3 or 4) on the CPU. Errors name the file. An existing
// `path` is replaced only when it is a PNG (io/output_path.h), atomically.
void write_png(const std::string& path, const torch::Tensor& image);
// The PNG file's bytes of such an image, in memory (a TensorBoard image summary); errors name `what`.
std::string encode_png(const torch::Tensor& image, const std::string& what);

// B x C x R x R images in [-1, 1] tiled `cols` per row with a 2-pixel border -> H x W x C uint8.
torch::Tensor image_grid(const torch::Tensor& images, int64_t cols);

}  // namespace hamgan
