// Pillow's bicubic resize of 8-bit images (Image.resize(size, Image.BICUBIC), which
// torchvision's Resize calls on a PIL image): the preprocessing of dgm-eval (Stein et al. 2023)
// before its DINOv2 features, reproduced to the bit so that FD_DINOv2 here equals theirs.
// Pillow convolves rows then columns with the cubic kernel of a = -0.5, stretched by the scale
// when shrinking (an antialiasing filter), in 22-bit fixed point, rounding to 8 bits between
// the passes.
#pragma once
#include <torch/torch.h>

namespace hamgan::metrics {

// [B, C, H, W] uint8 -> [B, C, out_h, out_w] uint8; every channel on its own, as Pillow does.
torch::Tensor pil_bicubic_resize(const torch::Tensor& images, int64_t out_h, int64_t out_w);

}  // namespace hamgan::metrics
