// DiffAugment (Zhao et al. 2020, "Differentiable Augmentation for Data-Efficient GAN Training",
// Sec. 3 and Fig. 4): the same random, differentiable transforms T on every image D sees, real
// and fake, in D's step and in G's (L_D = f(-D(T(x))) + f(D(T(G(z)))), L_G = f(-D(T(G(z))))),
// so D cannot memorise the real set while G's gradient passes through T. Per image:
//   color:       x + (b - 1/2);  then (x - mean_c x) * 2s + mean_c x;  then (x - mean x) * (c + 1/2) + mean x
//                (brightness, saturation, contrast; b, s, c ~ U[0, 1); means over channels / the image)
//   translation: shift by (tx, ty) ~ U{-r, ..., r}, r = round(H/8), zeros shifted in
//   cutout:      zero a square of round(H/2) centred at a uniform position (clipped at the border)
// in that order, as the authors' reference policy "color,translation,cutout". The random draws are
// separate from the transform (tests give the oracle the same draws).
#pragma once
#include <torch/torch.h>

#include "gan/config/config.h"  // DiffAugPolicy
#include "gan/train/step_feature.h"

namespace hamgan {

struct AugmentDraws {
  torch::Tensor brightness, saturation, contrast;  // [B] float in [0, 1)  (color)
  torch::Tensor shift_x, shift_y;                  // [B] long in [-r, r]   (translation; x: rows)
  torch::Tensor cut_x, cut_y;                      // [B] long: cutout centres (rows, columns)
};

// Draws for `n` images of h x w from `gen` (CPU; the trainer's checkpointed RNG), moved to `device`.
AugmentDraws draw_augment(const DiffAugPolicy& p, int64_t n, int64_t h, int64_t w, at::Generator& gen,
                          torch::Device device);
// T(x) for x [B, C, H, W] (any memory format, any float dtype); differentiable in x.
torch::Tensor diff_augment(const torch::Tensor& x, const DiffAugPolicy& p, const AugmentDraws& d);

// The step feature (gan/train/step_feature.h; train.diffaug): T on every batch D sees, in D's
// step and in G's, drawn from the trainer's checkpointed run RNG.
std::unique_ptr<StepFeature> make_diff_augment_feature(const Config& cfg, torch::Device device);

}  // namespace hamgan
