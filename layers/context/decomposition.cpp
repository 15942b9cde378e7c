#include "layers/context/decomposition.h"

#include "core/error.h"

namespace hamgan {

Decomposed solve(const Decomposition& ham, const torch::Tensor& x, const torch::Tensor& bases0,
                 int64_t steps, HamGrad grad) {
  if (x.dim() != 3 || bases0.dim() != 3 || bases0.size(0) != x.size(0) ||
      bases0.size(1) != x.size(1))
    fail(ham.name(), ": bases ", bases0.sizes(), " do not fit X ", x.sizes(),
         " (expected batch x d x r and batch x d x n)");
  torch::Tensor bases = bases0, coef;
  {
    // one_step: the iterations are constants for autograd (Sec. 2.3).
    c10::optional<torch::NoGradGuard> no_grad;
    if (grad == HamGrad::one_step) no_grad.emplace();
    coef = ham.init_coef(x, bases);
    ham.iterate(x, bases, coef, steps);
  }
  coef = ham.final_coef(x, bases, coef);
  return {torch::Tensor(), bases, coef};
}

Decomposed Decomposition::solve_one_step(const torch::Tensor& raw, const torch::Tensor& bases0,
                                         int64_t steps) const {
  return solve(*this, prepare(raw).to(bases0.scalar_type()), bases0, steps, HamGrad::one_step);
}

Decomposed decompose(const Decomposition& ham, const torch::Tensor& x, const torch::Tensor& bases0,
                     int64_t steps, HamGrad grad) {
  Decomposed m = solve(ham, x, bases0, steps, grad);
  m.output = torch::bmm(m.bases, m.coef);
  return m;
}

torch::Tensor normalize_columns(const torch::Tensor& t) {
  return torch::nn::functional::normalize(
      t, torch::nn::functional::NormalizeFuncOptions().p(2).dim(1).eps(1e-6));
}

torch::Tensor column_cosine(const torch::Tensor& bases, const torch::Tensor& x) {
  return torch::bmm(normalize_columns(bases).transpose(1, 2), normalize_columns(x));
}

}  // namespace hamgan
