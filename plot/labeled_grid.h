// A sample grid a person can read: image_grid's layout with every cell upscaled (nearest
// neighbour, an integer factor) to at least `min_cell` pixels, and each row's class index
// written at its start in the bitmap font (plot/bitmap_font.h), white on the black border.
#pragma once
#include <torch/torch.h>

namespace hamgan {

// images: B x C x R x R in [-1, 1]; labels: B class indices (a row is labelled with its first
// image's class). -> H x W x 3 uint8.
torch::Tensor labeled_grid(const torch::Tensor& images, const torch::Tensor& labels, int64_t cols,
                           int64_t min_cell = 64);

// The geometry labeled_grid uses, for callers and tests.
struct LabeledGridLayout {
  int64_t scale = 1;       // cell = R * scale
  int64_t cell = 0;        // upscaled cell size in pixels
  int64_t text_scale = 1;  // glyphs are drawn at 5 x 7 times this
  int64_t margin = 0;      // width of the label column
};
LabeledGridLayout labeled_grid_layout(int64_t image_size, int64_t max_label, int64_t min_cell = 64);

}  // namespace hamgan
