// FLOPs of one training step per image, on paper: what `hamgan info` prints and
// `hamgan bench train` divides by to report TFLOP/s. Forward FLOPs are 2 x the MACs that
// MacCounter sees in one G and one D forward (matrix products and convolutions only);
// backward is 2 x forward (input and weight gradients), except D's backward in the G step,
// 1 x forward (input gradients only: D's weights are frozen there). Per image of the batch:
//   D step (n_dis times): G forward without grad, D forward + backward on real and fake
//                         = G + 2 * 3D
//   G step:               G forward + backward, D forward + input backward = 3G + 2D
// The count runs the folded convolutions (layers/fold_taps.h: G's upsample + 3x3 conv, D's 3x3
// conv + pool; D's shortcut pools before its 1x1 conv), whatever train.folded_convs says: they compute the same function as the plain
// forms with 2.25x fewer MACs in those layers, and one count per config keeps the TFLOP/s of
// runs with and without the folds comparable (the plain forms' MACs would credit the slower
// run with more FLOPs for the same images).
#pragma once
#include "gan/config/config.h"

namespace hamgan {

struct StepCost {
  double g_forward = 0, d_forward = 0;  // FLOPs of one image's forward pass
  int64_t n_dis = 1;
  double d_step() const { return g_forward + 6 * d_forward; }
  double g_step() const { return 3 * g_forward + 2 * d_forward; }
  double total() const { return static_cast<double>(n_dis) * d_step() + g_step(); }
};

// Builds G and D from the config on the CPU and counts one forward of each at batch 1, in the
// forms `auto` picks for fp32 on a CPU whatever cfg.train.folded_convs says (one count per model).
StepCost training_step_cost(const Config& cfg);

}  // namespace hamgan
