#include "layers/context/siamese_attention.h"

#include <cmath>

#include "core/error.h"

namespace hamgan {

torch::Tensor siamese_attention(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, const torch::Tensor& w) {
  const int64_t d = q.size(1), n = q.size(2);
  if (k.size(1) != d || w.numel() != d || k.size(2) != n || v.size(2) != n)
    fail("siamese attention: q ", q.sizes(), ", k ", k.sizes(), ", v ", v.sizes(), ", w ",
         w.sizes(), " do not fit (expected q, k: B x d x N; v: B x p x N; w: d)");
  const torch::Tensor wq = torch::matmul(w.view({1, 1, d}), q);                   // B x 1 x N
  const torch::Tensor kw = k.is_same(q) ? wq : torch::matmul(w.view({1, 1, d}), k);  // (K^T w)^T
  const torch::Tensor vbar = v.mean(2, true);                                     // B x p x 1
  const torch::Tensor global = torch::bmm(v, kw.transpose(1, 2)) / double(n);     // B x p x 1
  return torch::bmm(vbar, wq) + global;  // local + global response terms (Eq. 6)
}

torch::Tensor init_siamese_weight(int64_t d) { return torch::randn({d}) / std::sqrt(double(d)); }

SaoImpl::SaoImpl(int64_t c, const SaoOptions& opt, SNOptions sn)
    : AttentionImpl("sao", c, sn, opt, ProjectionNames{}) {
  sim_w = register_parameter("sim_w", init_siamese_weight(qk_channels()));
}

torch::Tensor SaoImpl::branch(const torch::Tensor& x) {
  const Qkv p = project_flat(x);  // paper: q and k are X itself, one tensor
  const torch::Tensor o = siamese_attention(p.q, p.k, p.v, sim_w);
  return output(o.view({x.size(0), o.size(1), x.size(2), x.size(3)}));
}

std::shared_ptr<const ContextOptions> parse_sao_options(ConfigNode& node) {
  auto o = std::make_shared<SaoOptions>();
  parse_attention_options(node, *o, true);
  return o;
}

ContextModule make_sao(const ContextSpec& spec) {
  return std::make_shared<SaoImpl>(spec.channels, context_options<SaoOptions>(spec), spec.sn);
}

}  // namespace hamgan
