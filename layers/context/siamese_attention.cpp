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

SaoSaganImpl::SaoSaganImpl(int64_t c, const SaoOptions& opt, SNOptions sn)
    : ProjectedAttentionImpl("sao", c, opt.sagan, sn) {
  sim_w = register_parameter("sim_w", init_siamese_weight(qk_channels()));
  const torch::Tensor w = sim_w;
  op_ = [w](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t h,
            int64_t wd) {
    const torch::Tensor o = siamese_attention(q, k, v, w);
    return o.view({o.size(0), o.size(1), h, wd});
  };
}

SaoPaperImpl::SaoPaperImpl(int64_t c, SNOptions sn) : c_(c) {
  wv = register_module("wv", SNConv2d(c, c, 1, 0, false, sn));
  sim_w = register_parameter("sim_w", init_siamese_weight(c));
  gamma = register_parameter("gamma", torch::zeros({}));
}

torch::Tensor SaoPaperImpl::forward(const torch::Tensor& x, const torch::Tensor&) {
  check_context_input("sao", x, c_);
  const torch::Tensor q = x.flatten(2);
  return x + gamma * siamese_attention(q, q, wv->forward(x).flatten(2), sim_w).view_as(x);
}

std::shared_ptr<const ContextOptions> parse_sao_options(ConfigNode& node) {
  auto o = std::make_shared<SaoOptions>();
  o->projections = node.choice("projections", o->projections, {"sagan", "paper"});
  o->sagan = parse_projection_options(node);
  return o;
}

ContextModule make_sao(const ContextSpec& spec) {
  const auto& opt = context_options<SaoOptions>(spec);
  if (opt.projections == "paper") return std::make_shared<SaoPaperImpl>(spec.channels, spec.sn);
  return std::make_shared<SaoSaganImpl>(spec.channels, opt, spec.sn);
}

}  // namespace hamgan
