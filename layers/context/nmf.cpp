#include "layers/context/nmf.h"

#include <ATen/Parallel.h>

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
  const torch::Tensor xs = x.contiguous();
  torch::Tensor d = bases.contiguous().clone(), c = coef.contiguous().clone();
  const int64_t dim = d.size(1), r = d.size(2), n = xs.size(2);
  at::parallel_for(0, xs.size(0), 1, [&](int64_t begin, int64_t end) {
    const torch::NoGradGuard no_grad;  // worker threads start with autograd's default
    const auto o = xs.options();
    torch::Tensor dtx = torch::empty({r, n}, o), den_c = torch::empty({r, n}, o);
    torch::Tensor dtd = torch::empty({r, r}, o), cct = torch::empty({r, r}, o);
    torch::Tensor xct = torch::empty({dim, r}, o), den_d = torch::empty({dim, r}, o);
    for (int64_t b = begin; b < end; ++b) {
      const torch::Tensor xb = xs[b];
      torch::Tensor db = d[b], cb = c[b];
      for (int64_t k = 0; k < steps; ++k) {
        // C <- C * (D^T X) / (D^T D C + eps)
        at::mm_out(dtx, db.t(), xb);
        at::mm_out(dtd, db.t(), db);
        at::mm_out(den_c, dtd, cb);
        cb.mul_(dtx).div_(den_c.add_(kEps));
        // D <- D * (X C^T) / (D C C^T + eps)
        at::mm_out(xct, xb, cb.t());
        at::mm_out(cct, cb, cb.t());
        at::mm_out(den_d, db, cct);
        db.mul_(xct).div_(den_d.add_(kEps));
      }
    }
  });
  bases = d;
  coef = c;
}

std::shared_ptr<const Decomposition> parse_nmf(ConfigNode& node) {
  NMFOptions o;
  o.inv_t = node.real("inv_t", o.inv_t, 1e-6, 1e6);
  o.normalize_bases = node.boolean("normalize_bases", o.normalize_bases);
  return std::make_shared<const NMF>(o);
}

}  // namespace hamgan
