// An 8-bit interleaved (HWC) image and the conversions every source shares: short-side
// centre crop, PIL-compatible antialiased resize, channel conversion, zero padding.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace hamgan {

struct Image {
  int width = 0, height = 0, channels = 0;  // channels: 1 (L) or 3 (RGB)
  std::vector<uint8_t> pixels;              // height x width x channels
};

// Antialiased bilinear resize of the `cw` x `ch` box at (x0, y0) of `in` to `ow` x `oh`,
// bit-identical to PIL's Image.crop(box).resize((ow, oh), Image.BILINEAR) (Pillow >= 7:
// triangle filter widened by the scale factor, 22-bit fixed-point coefficients,
// horizontal pass then vertical pass, each rounded to uint8).
Image resize_box(const Image& in, int x0, int y0, int cw, int ch, int ow, int oh);

// Short-side centre crop, resize to `resolution` squared, then conversion to `channels`
// (RGB->L by PIL's ITU-R 601-2 luma, L->RGB by replication), written as CHW into `out`.
void fit_to(const Image& in, int resolution, int channels, uint8_t* out);

// Converts HWC `in` (same size as the target) to `channels` and writes CHW into `out`.
void to_chw(const Image& in, int channels, uint8_t* out);

// [C, H, W] float in [0, 1] (a copy).
torch::Tensor to_tensor(const Image& in);

}  // namespace hamgan
