// GAN losses on raw D logits (fp32). Hinge (Lim & Ye 2017; SAGAN eq. 3):
//   L_D = E[relu(1 - D(x))] + E[relu(1 + D(G(z)))],  L_G = -E[D(G(z))].
// Non-saturating (Goodfellow et al. 2014, sec. 3):
//   L_D = E[softplus(-D(x))] + E[softplus(D(G(z)))],  L_G = E[softplus(-D(G(z)))].
// Relativistic pairing, RpGAN (Jolicoeur-Martineau 2019, the relativistic standard GAN; Huang et
// al. 2024, R3GAN's loss): each fake is judged against one real, pair i with pair i,
//   L_D = E[softplus(D(G(z)) - D(x))],  L_G = E[softplus(D(x) - D(G(z)))],
// so G cannot lower its loss by moving every fake to one place D rates highly (Sun et al. 2020:
// no mode-collapsed basins). Its one term is reported as D's real term; the fake term is 0.
#pragma once
#include <torch/torch.h>

#include "gan/config/config.h"  // GanLoss

namespace hamgan {


struct DLoss {
  torch::Tensor real, fake;  // the two expectations; L_D = real + fake
};
DLoss d_loss(GanLoss type, const torch::Tensor& d_real, const torch::Tensor& d_fake);
// d_real: D's logits of as many real images as fakes, constants for G's gradient; read by the
// relativistic loss only, the others take none.
torch::Tensor g_loss(GanLoss type, const torch::Tensor& d_fake, const torch::Tensor& d_real = {});
// Whether G's loss reads D's logits of real images.
inline bool g_loss_needs_real(GanLoss type) { return type == GanLoss::Relativistic; }

}  // namespace hamgan
