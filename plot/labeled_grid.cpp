#include "plot/labeled_grid.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "io/png.h"
#include "plot/bitmap_font.h"

namespace hamgan {

LabeledGridLayout labeled_grid_layout(int64_t image_size, int64_t max_label, int64_t min_cell) {
  if (image_size < 1 || min_cell < 1) fail("labeled grid: image size ", image_size, " and min_cell ", min_cell, " must be >= 1");
  LabeledGridLayout l;
  l.scale = std::max<int64_t>(1, (min_cell + image_size - 1) / image_size);
  l.cell = image_size * l.scale;
  l.text_scale = std::clamp<int64_t>(l.cell / 32, 1, 4);
  l.margin = plot::text_width(std::to_string(std::max<int64_t>(0, max_label))) * l.text_scale + 8;
  return l;
}

torch::Tensor labeled_grid(const torch::Tensor& images, const torch::Tensor& labels, int64_t cols, int64_t min_cell) {
  if (images.dim() != 4 || images.size(2) != images.size(3))
    fail("labeled grid: expected B x C x R x R images, got ", images.sizes());
  if (cols < 1) fail("labeled grid: ", cols, " columns; expected >= 1");
  const torch::Tensor y = labels.to(torch::kCPU, torch::kLong).flatten();
  if (y.numel() != images.size(0)) fail("labeled grid: ", y.numel(), " labels for ", images.size(0), " images");
  const int64_t b = images.size(0), rows = (b + cols - 1) / cols, pad = 2;  // pad: image_grid's border
  const LabeledGridLayout l = labeled_grid_layout(images.size(2), b ? y.max().item<int64_t>() : 0, min_cell);
  const torch::Tensor up = images.detach().to(torch::kCPU).repeat_interleave(l.scale, 2).repeat_interleave(l.scale, 3);
  torch::Tensor grid = image_grid(up, cols);
  if (grid.size(2) == 1) grid = grid.expand({-1, -1, 3});
  torch::Tensor margin = torch::zeros({grid.size(0), l.margin, 3}, torch::kUInt8);
  for (int64_t r = 0; r < rows; ++r) {
    const std::string text = std::to_string(y[r * cols].item<int64_t>());
    torch::Tensor glyphs = torch::zeros({plot::kGlyphH, plot::text_width(text), 3}, torch::kUInt8);
    plot::draw_text(glyphs, 0, 0, text, {255, 255, 255});
    glyphs = glyphs.repeat_interleave(l.text_scale, 0).repeat_interleave(l.text_scale, 1);
    const int64_t top = pad + r * (l.cell + pad) + (l.cell - glyphs.size(0)) / 2;
    margin.narrow(0, top, glyphs.size(0)).narrow(1, 4, glyphs.size(1)).copy_(glyphs);
  }
  return torch::cat({margin, grid}, 1).contiguous();
}

}  // namespace hamgan
