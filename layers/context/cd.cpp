#include "layers/context/cd.h"

#include "layers/context/vq.h"

namespace hamgan {

torch::Tensor CD::random_bases(int64_t batch, int64_t d, int64_t r,
                               const c10::optional<torch::Generator>& gen,
                               const torch::TensorOptions& options) const {
  return random_unit_bases(batch, d, r, gen, options);
}

void CD::step(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef) const {
  coef = soft_assign(x, bases, opt_.temperature);
  bases = normalize_columns(torch::bmm(x, coef.transpose(1, 2)));
}

torch::Tensor CD::final_coef(const torch::Tensor& x, const torch::Tensor& bases,
                             const torch::Tensor&) const {
  // Eq. 14's closed form; D^T D + beta I is positive definite for beta > 0.
  const torch::Tensor bt = bases.transpose(1, 2);
  const torch::Tensor eye = torch::eye(bases.size(2), bases.options());
  // The ATen op (LibTorch 2.x dropped the torch::linalg C++ namespace), in its _ex form without
  // error checks: linalg_solve reads `info` on the host on every forward, a device sync on CUDA
  // (issue 21.3), and the matrix is positive definite by construction.
  return std::get<0>(torch::linalg_solve_ex(torch::bmm(bt, bases) + opt_.beta * eye, torch::bmm(bt, x),
                                            /*left=*/true, /*check_errors=*/false));
}

std::shared_ptr<const Decomposition> parse_cd(ConfigNode& node) {
  CDOptions o;
  o.temperature = node.real("temperature", o.temperature, 1e-6, 1e6);
  o.beta = node.real("beta", o.beta, 1e-8, 1e6);
  return std::make_shared<const CD>(o);
}

}  // namespace hamgan
