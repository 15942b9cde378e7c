// GAN losses on raw D logits (fp32). Hinge (Lim & Ye 2017; SAGAN eq. 3):
//   L_D = E[relu(1 - D(x))] + E[relu(1 + D(G(z)))],  L_G = -E[D(G(z))].
// Non-saturating (Goodfellow et al. 2014, sec. 3):
//   L_D = E[softplus(-D(x))] + E[softplus(D(G(z)))],  L_G = E[softplus(-D(G(z)))].
#pragma once
#include <torch/torch.h>

#include "gan/config/config.h"  // GanLoss

namespace hamgan {


struct DLoss {
  torch::Tensor real, fake;  // the two expectations; L_D = real + fake
};
DLoss d_loss(GanLoss type, const torch::Tensor& d_real, const torch::Tensor& d_fake);
torch::Tensor g_loss(GanLoss type, const torch::Tensor& d_fake);

}  // namespace hamgan
