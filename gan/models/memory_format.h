// Channels-last (NHWC) storage for a model's 4-D weights. Convolutions whose input or weight
// is channels-last run the NHWC kernels (cuDNN, oneDNN), which are faster for bf16 on
// tensor cores and for some CPU shapes; values and state-dict keys do not change.
#pragma once
#include <torch/torch.h>

namespace hamgan {

// Re-lays every 4-D parameter and buffer of `m` in place (same tensors, new strides), so
// optimizers and EMA built on them keep working. Call before creating optimizers.
void to_channels_last(torch::nn::Module& m);

}  // namespace hamgan
