// R1 (Mescheder et al. 2018, "Which Training Methods for GANs do actually Converge?", Eq. 9),
// the gradient penalty on real images,
//   R_1 = gamma/2 E_x[ ||grad_x D(x)||^2 ],   L_D += R_1,
// in StyleGAN2's lazy form (Karras et al. 2020, Sec. 3.1 and Appendix B): on every
// train.r1_every-th D step only, multiplied by r1_every so that its average strength stays gamma.
// Where it sits in hamgan's step:
//  - the reals as D sees them in its step: after DiffAugment when train.diffaug is on, the
//    gradient taken with respect to the images before T (StyleGAN2-ADA's loss, whose D runs
//    the augmentation inside);
//  - from the D step's own forward pass (no second forward, no second power iteration of
//    spectral norm) in the step's precision: under bf16 autocast (train.amp) the input gradient
//    carries bf16 rounding, its squared norm is summed in fp32; train.amp=false for fp32;
//  - per micro-batch, scaled by 1 / train.accumulate as the rest of D's loss; data parallel:
//    each rank's penalty over its own reals, gradients averaged with the rest of D's, which is
//    the penalty over the global batch.
// R2 is the same penalty on the generated images D sees in its step (the fakes as a leaf cut from
// G's graph, gradient through T), train.r2_gamma every train.r2_every D steps: with the
// relativistic pairing loss (train.loss: rpgan) and R1 beside it, R3GAN's objective (Huang et al.
// 2024, "The GAN is dead; long live the GAN!", Eq. 5-6: L_D + gamma/2 (E||grad D(x)||^2 +
// E||grad D(G(z))||^2)), which that paper proves locally convergent.
// D's input gradient is differentiated again: every context module's backward is itself
// differentiable, the NMF Hamburger's hand-written CPU one included (layers/context/nmf_cpu.h;
// tests/test_d_regularisers.cpp trains with R1 for every registered module in D).
#pragma once
#include <torch/torch.h>

#include "gan/train/step_feature.h"

namespace hamgan {

// E_i ||dD(x_i)/dx_i||^2 for D's outputs `d_real` [B] on `x` [B, ...] (which requires grad; each
// output depends on its own image only, as D has no batch statistics), fp32 or wider; differentiable
// with respect to D's parameters (a graph through the gradient: double backward).
torch::Tensor r1_penalty(const torch::Tensor& d_real, const torch::Tensor& x);

// The step feature (gan/train/step_feature.h; train.r1_gamma > 0). Its statistic d_r1 is
// E||grad_x D(x)||^2 (before gamma / 2) of the latest D step that computed it, 0 before the
// first; checkpointed as "r1_penalty" so a resumed run reports the same.
std::unique_ptr<StepFeature> make_r1_feature(const Config& cfg, torch::Device device);
// The same on the fakes (train.r2_gamma > 0): statistic d_r2, checkpointed as "r2_penalty".
std::unique_ptr<StepFeature> make_r2_feature(const Config& cfg, torch::Device device);

}  // namespace hamgan
