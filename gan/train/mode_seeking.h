// Mode seeking (Mao et al. 2019, "Mode Seeking Generative Adversarial Networks for Diverse Image
// Synthesis", Eq. 3-4): G is pushed to map distant latents of one condition to distant images,
//   L_ms = ( d_I(G(c, z1), G(c, z2)) / d_z(z1, z2) )^-1,   L_G += lambda L_ms,
// with d the mean absolute difference, the ratio inverted with eps = 1e-5 as in the authors'
// code: 1 / (ratio + eps). The authors draw two latents per condition; hamgan's step draws one
// label per fake, so the pairs are every two fakes of a micro-batch with the same label, and the
// ratio is that of the distances' means over those pairs (the authors' means over their batch).
// A micro-batch without such a pair adds nothing. Each rank pairs its own fakes.
#pragma once
#include <torch/torch.h>

#include "gan/train/step_feature.h"

namespace hamgan {

// L_ms of fakes [B, ...] from latents z [B, z_dim] with labels y [B], 0 (and no gradient) where
// no two labels agree, decided on the device (no host read). In fp32 (or double for double
// fakes); differentiable in fake.
torch::Tensor mode_seeking_loss(const torch::Tensor& fake, const torch::Tensor& z, const torch::Tensor& y);

// The step feature (gan/train/step_feature.h; train.mode_seeking > 0): lambda L_ms in every
// micro-batch's G loss. Its statistic g_ms is L_ms (before lambda), the mean over the step's
// micro-batches that had a pair, 0 where none did.
std::unique_ptr<StepFeature> make_mode_seeking_feature(const Config& cfg, torch::Device device);

}  // namespace hamgan
