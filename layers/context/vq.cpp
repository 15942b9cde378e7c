#include "layers/context/vq.h"

namespace hamgan {

torch::Tensor soft_assign(const torch::Tensor& x, const torch::Tensor& bases, double temperature) {
  return torch::softmax(column_cosine(bases, x) / temperature, 1);
}

torch::Tensor random_unit_bases(int64_t batch, int64_t d, int64_t r,
                                const c10::optional<torch::Generator>& gen,
                                const torch::TensorOptions& options) {
  return normalize_columns(torch::randn({batch, d, r}, gen, options));
}

torch::Tensor VQ::random_bases(int64_t batch, int64_t d, int64_t r,
                               const c10::optional<torch::Generator>& gen,
                               const torch::TensorOptions& options) const {
  return random_unit_bases(batch, d, r, gen, options);
}

torch::Tensor VQ::final_coef(const torch::Tensor& x, const torch::Tensor& bases,
                             const torch::Tensor&) const {
  return soft_assign(x, bases, opt_.temperature);
}

void VQ::step(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef) const {
  coef = soft_assign(x, bases, opt_.temperature);
  // D <- X C^T diag(C 1_n)^{-1}: each atom the C-weighted mean of the columns of X.
  bases = torch::bmm(x, coef.transpose(1, 2)) / (coef.sum(2).unsqueeze(1) + kEps);
}

std::shared_ptr<const Decomposition> parse_vq(ConfigNode& node) {
  static const KeyTable<VQOptions> table(OnResume::Model, {temperature_key(&VQOptions::temperature)});
  VQOptions o;
  table.read(node, o);
  return std::make_shared<const VQ>(o);
}

}  // namespace hamgan
