// Adaptive discriminator augmentation (Karras et al. 2020, "Training Generative Adversarial
// Networks with Limited Data", Sec. 3): the pipeline of gan/train/ada_augment.h on every image D
// sees, real and fake, in D's step and in G's (G learns through it: the transforms are
// differentiable), with one probability p for every transform. p follows the overfitting
// heuristic
//   r_t = E[sign(D(x_real))]   over the real images of the last train.ada_interval D steps
// (D's outputs on the augmented reals, every rank's): every interval,
//   p <- clamp(p + sign(r_t - target) * N / (train.ada_kimg * 1000), 0, 1)
// with N the real images of that interval, so p can move from 0 to 1 while D sees ada_kimg
// thousand images. train.ada_target 0 keeps p at train.ada_p. Under the relativistic pairing
// loss (train.loss: rpgan) D's outputs carry an offset the loss never sees (only differences
// D(x) - D(G(z)) enter it), so sign(D(x)) can drift to 1 without any overfitting (a seed of the
// small-data benchmark did, and p's rise to 0.77 collapsed it); there r_t is the pairs' own
// E[sign(D(x_i) - D(G(z_i)))], which a D that memorises its reals drives to 1 just as well. A D that memorises its reals
// scores them ever more surely positive (r_t -> 1) and p rises until D can no longer tell; the
// pipeline does not leak into G's samples as long as p stays below about 0.8 (the paper's Fig. 3).
// p, the latest r_t and the interval's running sums are checkpointed ("ada"), so a resumed run
// augments on exactly as an unbroken one.
#pragma once
#include "gan/train/step_feature.h"

namespace hamgan {

// The step feature (gan/train/step_feature.h; train.ada not ""). Its statistics ada_p and ada_rt
// are this iteration's p and the latest r_t (0 before the first interval ends).
std::unique_ptr<StepFeature> make_ada_feature(const Config& cfg, torch::Device device);

}  // namespace hamgan
