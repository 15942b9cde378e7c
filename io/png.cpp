#include "io/png.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/output_path.h"

namespace hamgan {

std::string encode_png(const torch::Tensor& image, const std::string& what) {
  if (image.dim() != 3 || image.scalar_type() != torch::kUInt8 || !image.device().is_cpu())
    fail(what, ": expected an H x W x C uint8 CPU image, got ", image.sizes(), " ", image.scalar_type());
  const int64_t h = image.size(0), w = image.size(1), c = image.size(2);
  if (c != 1 && c != 3 && c != 4) fail(what, ": expected 1, 3 or 4 channels, got ", c);
  const torch::Tensor data = image.contiguous();
  std::string bytes;
  const auto append = [](void* ctx, void* p, int n) { static_cast<std::string*>(ctx)->append(static_cast<const char*>(p), n); };
  if (!stbi_write_png_to_func(append, &bytes, static_cast<int>(w), static_cast<int>(h), static_cast<int>(c),
                              data.data_ptr<uint8_t>(), static_cast<int>(w * c)))
    fail(what, ": cannot encode PNG");
  return bytes;
}

void write_png(const std::string& path, const torch::Tensor& image) {
  const std::string bytes = encode_png(image, path);  // a bad image fails before any file is touched
  io::check_output_path(path, io::png_output());  // replaces an earlier PNG only, never another file
  io::write_file_atomically(path, bytes);  // never a zero-byte or partial PNG
}

torch::Tensor image_grid(const torch::Tensor& images, int64_t cols) {
  if (images.dim() != 4) fail("image grid: expected B x C x H x W images, got ", images.sizes());
  const int64_t b = images.size(0), c = images.size(1), h = images.size(2), w = images.size(3);
  const int64_t rows = (b + cols - 1) / cols, pad = 2;
  torch::Tensor grid = torch::zeros({c, rows * (h + pad) + pad, cols * (w + pad) + pad}, torch::kUInt8);
  const torch::Tensor px = images.detach()
                               .to(torch::kCPU, torch::kFloat)
                               .add(1.0)
                               .mul(127.5)
                               .round()
                               .clamp(0, 255)
                               .to(torch::kUInt8);
  for (int64_t i = 0; i < b; ++i) {
    const int64_t y = pad + (i / cols) * (h + pad), x = pad + (i % cols) * (w + pad);
    grid.narrow(1, y, h).narrow(2, x, w).copy_(px[i]);
  }
  return grid.permute({1, 2, 0}).contiguous();
}

}  // namespace hamgan
