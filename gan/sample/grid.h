// Pictures of a sampler: a class grid (one row per class, `cols` images each, the images
// k = 0..cols-1 that `hamgan sample` writes for that class) and latent interpolation rows
// (per class, `steps` images on the line from z(class, 0) to z(class, 1), both ends included).
#pragma once
#include <torch/torch.h>

#include <vector>

#include "gan/sample/sampler.h"

namespace hamgan::sample {

// The most images per row of a class grid or an interpolation (`--cols`, `--steps`).
constexpr int64_t kMaxGridColumns = 256;

// Errors naming the flag unless 1 <= cols <= kMaxGridColumns (`--cols`) and 2 <= steps <=
// kMaxGridColumns (`--steps`): `hamgan sample` checks them before any sample is written.
void check_grid_columns(int64_t cols);
void check_interpolation_steps(int64_t steps);

// H x W x 3 uint8: plot/labeled_grid.h's layout (cells >= 64 px, the class index at the
// start of each row).
torch::Tensor class_grid(const Sampler& s, const std::vector<int64_t>& classes, int64_t cols);  // cols <= kMaxGridColumns
// Linear interpolation z_t = (1 - t) z0 + t z1, t = i / (steps - 1); steps >= 2.
torch::Tensor interpolation_latents(const torch::Tensor& z0, const torch::Tensor& z1, int64_t steps);
torch::Tensor interpolation_grid(const Sampler& s, const std::vector<int64_t>& classes, int64_t steps);

// The training run's progress grid (samples/samples_<iteration>.png): (z, y) for rows of every
// class, or 10 evenly spaced ones when there are more, and `cols` latents drawn from
// `train_seed`, the same z down each column so the rows differ only in the class.
std::pair<torch::Tensor, torch::Tensor> training_grid_latents(int64_t n_classes, int64_t z_dim,
                                                              int64_t train_seed, int64_t cols = 8);

}  // namespace hamgan::sample
