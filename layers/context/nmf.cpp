#include "layers/context/nmf.h"

#include "layers/context/nmf_cpu.h"

namespace hamgan {

torch::Tensor NMF::random_bases(int64_t batch, int64_t d, int64_t r,
                                const c10::optional<torch::Generator>& gen,
                                const torch::TensorOptions& options) const {
  torch::Tensor bases = torch::rand({batch, d, r}, gen, options);
  return opt_.normalize_bases ? normalize_columns(bases) : bases;
}

torch::Tensor NMF::init_coef(const torch::Tensor& x, const torch::Tensor& bases) const {
  return torch::softmax(opt_.inv_t * torch::bmm(bases.transpose(1, 2), x), 1);
}

torch::Tensor NMF::final_coef(const torch::Tensor& x, const torch::Tensor& bases,
                              const torch::Tensor& coef) const {
  // Alg. 2: C <- C * (D^T X) / (D^T D C)
  const torch::Tensor bt = bases.transpose(1, 2);
  return coef * torch::bmm(bt, x) / (torch::bmm(torch::bmm(bt, bases), coef) + kEps);
}

void NMF::step(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef) const {
  coef = final_coef(x, bases, coef);
  // Alg. 2: D <- D * (X C^T) / (D C C^T)
  const torch::Tensor ct = coef.transpose(1, 2);
  bases = bases * torch::bmm(x, ct) / (torch::bmm(bases, torch::bmm(coef, ct)) + kEps);
}

void NMF::iterate(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef,
                  int64_t steps) const {
  if (steps <= 0 || torch::GradMode::is_enabled() || !x.is_cpu() || x.size(0) == 0) {
    Decomposition::iterate(x, bases, coef, steps);
    return;
  }
  nmf_updates_cpu(x, bases, coef, steps, /*relu=*/false, opt_.inv_t, kEps);
}

Decomposed NMF::solve_one_step(const torch::Tensor& raw, const torch::Tensor& bases0,
                               int64_t steps) const {
  if (!raw.is_cpu() || raw.size(0) == 0 || raw.dim() != 3 || bases0.dim() != 3)
    return Decomposition::solve_one_step(raw, bases0, steps);
  torch::Tensor bases = bases0, coef;  // undefined coef: init_coef's softmax, per image
  nmf_updates_cpu(raw, bases, coef, steps, /*relu=*/true, opt_.inv_t, kEps);
  return {torch::Tensor(), bases, nmf_final_update_cpu(raw, bases, coef, kEps)};
}

std::shared_ptr<const Decomposition> parse_nmf(ConfigNode& node) {
  static const KeyTable<NMFOptions> table(OnResume::Model, {
      keys::real("inv_t", &NMFOptions::inv_t, closed(1e-6, 1e6), "1/T of the softmax that initialises the coefficients"),
      keys::boolean("normalize_bases", &NMFOptions::normalize_bases, "random bases scaled to unit L2 norm per column"),
  });
  NMFOptions o;
  table.read(node, o);
  return std::make_shared<const NMF>(o);
}

}  // namespace hamgan
