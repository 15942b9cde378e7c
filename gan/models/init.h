// Weight initialisation by name (BigGAN-PyTorch's init_weights): every conv, linear and
// embedding weight (SN `weight_orig` included, any parameter of 2+ dims named *weight*)
// gets `orthogonal`, `xavier` (uniform) or `normal` N(0, 0.02); biases and BN keep theirs.
#pragma once
#include <torch/torch.h>

#include "gan/config/config.h"  // InitScheme

namespace hamgan {

void init_weights(torch::nn::Module& m, InitScheme scheme);

}  // namespace hamgan
