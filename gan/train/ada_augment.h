// StyleGAN2-ADA's augmentation pipeline (Karras et al. 2020, "Training Generative Adversarial
// Networks with Limited Data", Sec. 2.2 and Appendix B), the groups of its "bgc" choice, each
// transform applied to an image with probability p:
//   b  x-flip, 90-degree rotations, integer translation (up to 1/8 of the image)
//   g  isotropic scaling (log2 std 0.2), rotation before and after anisotropic scaling (log2 std
//      0.2; each with 1 - sqrt(1 - p), so that one of the two happens with p), fractional
//      translation (std 1/8)
//   c  brightness (std 0.2), contrast (log2 std 0.5), luma flip, hue rotation and saturation
//      (log2 std 1; hue and saturation on RGB only)
// The geometric transforms compose into one inverse matrix per image (output pixel -> input
// pixel) and run as one resampling: reflection padding wide enough for the image's corners, 2x
// upsampling with the sym6 wavelet low-pass filter, bilinear sampling, the same filter and 2x
// downsampling. The colour transforms compose into one 4x4 matrix per image around the luma axis
// (1, 1, 1) / sqrt(3). Everything is differentiable in the images, twice (R1 and R2 take
// D's input gradient through it): the resampling is gathers and convolutions with constant
// weights.
//
// Where hamgan differs from the authors' pipeline: an image whose geometric transforms are all
// the identity (none drawn, or drawn at identity values) is left as it is, not resampled, so p = 0
// is exactly no augmentation, and every image's result depends on its own draws (the padding is
// taken over the images that are resampled).
#pragma once
#include <torch/torch.h>

#include <vector>

#include "gan/config/config.h"  // AdaPolicy

namespace hamgan {

// One image's random draws per transform: a gate u in [0, 1) (the transform runs where u < p)
// and its raw value. All [B] float64 on the CPU ([B, 2] for the translations); a group's fields
// are undefined when the policy leaves it out.
struct AdaDraws {
  // b
  torch::Tensor xflip_u, xflip_i;   // i in {0, 1}
  torch::Tensor rot90_u, rot90_i;   // i in {0, 1, 2, 3}: quarter turns
  torch::Tensor xint_u, xint_t;     // t in [-1/8, 1/8)^2 of the image's width and height, rounded to pixels
  // g
  torch::Tensor scale_u, scale_n;   // n ~ N(0, 1): s = 2^(0.2 n)
  torch::Tensor rot_pre_u, rot_pre_t;    // t in [-1, 1): theta = pi t
  torch::Tensor aniso_u, aniso_n;   // s = 2^(0.2 n) along x, 1 / s along y
  torch::Tensor rot_post_u, rot_post_t;
  torch::Tensor xfrac_u, xfrac_n;   // [B, 2] ~ N(0, 1): t = n / 8 of the width and height
  // c
  torch::Tensor brightness_u, brightness_n;  // b = 0.2 n
  torch::Tensor contrast_u, contrast_n;      // c = 2^(0.5 n)
  torch::Tensor lumaflip_u, lumaflip_i;      // i in {0, 1}
  torch::Tensor hue_u, hue_t;                // theta = pi t
  torch::Tensor saturation_u, saturation_n;  // s = 2^n
};

// Every field by its name ("xflip_u", ...), for the tests' exchange with the reference.
std::vector<std::pair<const char*, torch::Tensor AdaDraws::*>> ada_draw_fields();

// Draws for n images from `gen` (the trainer's checkpointed run RNG), the enabled groups only.
AdaDraws draw_ada(const AdaPolicy& policy, int64_t n, at::Generator& gen);

// The composed inverse geometric transform of each image, [B, 3, 3] float64, in pixel units
// about the image centre (x: column, y: row); the identity where no geometric group is on.
torch::Tensor ada_geometric_matrix(const AdaPolicy& policy, double p, const AdaDraws& d, int64_t h, int64_t w);
// The composed colour transform of each image, [B, 4, 4] float64 (homogeneous RGB).
torch::Tensor ada_color_matrix(const AdaPolicy& policy, double p, const AdaDraws& d, int64_t channels);

// The pipeline on x [B, C, H, W] (C 1 or 3, any float dtype and memory format, any device) with
// probability p in [0, 1].
torch::Tensor ada_augment(const torch::Tensor& x, const AdaPolicy& policy, double p, const AdaDraws& d);

}  // namespace hamgan
