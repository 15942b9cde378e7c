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
  // Solved by Cholesky and two triangular solves, none of which reads a value on the host:
  // linalg_solve checks its LU's `info` there on every forward, and even linalg_solve_ex's
  // lu_solve does in LibTorch 1.13 (tests/test_host_reads.cpp), a device sync per step on CUDA
  // (the step never waits for the device). The ATen ops: LibTorch 2.x dropped the torch::linalg C++ namespace.
  const torch::Tensor l = std::get<0>(torch::linalg_cholesky_ex(torch::bmm(bt, bases) + opt_.beta * eye,
                                                                /*upper=*/false, /*check_errors=*/false));
  const torch::Tensor y = torch::linalg_solve_triangular(l, torch::bmm(bt, x), /*upper=*/false);
  return torch::linalg_solve_triangular(l.transpose(1, 2), y, /*upper=*/true);
}

std::shared_ptr<const Decomposition> parse_cd(ConfigNode& node) {
  static const KeyTable<CDOptions> table(OnResume::Model, {
      temperature_key(&CDOptions::temperature),
      keys::real("beta", &CDOptions::beta, closed(1e-8, 1e6), "ridge weight of the closed-form coefficients (D^T D + beta I)"),
  });
  CDOptions o;
  table.read(node, o);
  return std::make_shared<const CD>(o);
}

}  // namespace hamgan
