#include "gan/sample/grid.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>

#include "core/error.h"
#include "plot/labeled_grid.h"

namespace hamgan::sample {

void check_grid_columns(int64_t cols) {
  if (cols < 1 || cols > kMaxGridColumns)
    fail("--cols ", cols, ": expected 1..", kMaxGridColumns, " images per row of the class grid");
}

void check_interpolation_steps(int64_t steps) {
  if (steps < 2 || steps > kMaxGridColumns)
    fail("--steps ", steps, ": expected 2..", kMaxGridColumns, " images per interpolation row (both ends are drawn)");
}

torch::Tensor class_grid(const Sampler& s, const std::vector<int64_t>& classes, int64_t cols) {
  check_grid_columns(cols);
  std::vector<SampleItem> items;
  std::vector<int64_t> labels;
  for (int64_t c : classes)
    for (int64_t k = 0; k < cols; ++k) items.push_back({c, k}), labels.push_back(c);
  return labeled_grid(s.generate(items), torch::tensor(labels, torch::kLong), cols);
}

torch::Tensor interpolation_latents(const torch::Tensor& z0, const torch::Tensor& z1, int64_t steps) {
  check_interpolation_steps(steps);
  const torch::Tensor t = torch::linspace(0.0, 1.0, steps, torch::kFloat).unsqueeze(1);
  return (1 - t) * z0.unsqueeze(0) + t * z1.unsqueeze(0);
}

torch::Tensor interpolation_grid(const Sampler& s, const std::vector<int64_t>& classes, int64_t steps) {
  std::vector<torch::Tensor> rows, labels;
  for (int64_t c : classes) {
    const torch::Tensor z = interpolation_latents(s.latent(c, 0), s.latent(c, 1), steps);
    labels.push_back(torch::full({steps}, c, torch::kLong));
    rows.push_back(s.generate(z, labels.back()));
  }
  return labeled_grid(torch::cat(rows), torch::cat(labels), steps);
}

std::pair<torch::Tensor, torch::Tensor> training_grid_latents(int64_t n_classes, int64_t z_dim,
                                                              int64_t train_seed, int64_t cols) {
  const int64_t rows = std::min<int64_t>(n_classes, 10);
  auto gen = at::detail::createCPUGenerator(static_cast<uint64_t>(train_seed) + 0x5eed);
  const torch::Tensor z = torch::randn({cols, z_dim}, gen);
  torch::Tensor y = torch::empty({rows * cols}, torch::kLong);
  for (int64_t r = 0; r < rows; ++r) y.narrow(0, r * cols, cols).fill_(r * n_classes / rows);
  return {z.repeat({rows, 1}), y};
}

}  // namespace hamgan::sample
