#include "layers/context/kronecker_attention.h"

#include "core/error.h"

namespace hamgan {

torch::Tensor kronecker_averages(const torch::Tensor& t, int64_t h, int64_t w) {
  const torch::Tensor m = t.view({t.size(0), t.size(1), h, w});
  return torch::cat({m.mean(2), m.mean(3)}, 2);  // H^T (mean over rows), L^T (over columns)
}

torch::Tensor dot_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const torch::Tensor e = torch::bmm(k.transpose(1, 2), q);  // B x P x M, E = K^T Q
  return torch::bmm(v, torch::softmax(e, 1));                // column-wise softmax
}

torch::Tensor kronecker_outer_sum(const torch::Tensor& o, int64_t h, int64_t w) {
  const torch::Tensor ht = o.narrow(2, 0, w), lt = o.narrow(2, w, h);
  return lt.unsqueeze(3) + ht.unsqueeze(2);
}

torch::Tensor kao_kv_operator(const torch::Tensor& q, const torch::Tensor& k,
                              const torch::Tensor& v, int64_t h, int64_t w) {
  const torch::Tensor o = dot_attention(q, kronecker_averages(k, h, w), kronecker_averages(v, h, w));
  return o.view({o.size(0), o.size(1), h, w});
}

torch::Tensor kao_qkv_operator(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, int64_t h, int64_t w) {
  const torch::Tensor cq = kronecker_averages(q, h, w);
  // Q = K = V = C in the paper: average once when the inputs are the same tensor.
  const torch::Tensor ck = k.is_same(q) ? cq : kronecker_averages(k, h, w);
  const torch::Tensor cv = v.is_same(q) ? cq : kronecker_averages(v, h, w);
  return kronecker_outer_sum(dot_attention(cq, ck, cv), h, w);
}

KaoSaganImpl::KaoSaganImpl(int64_t c, const KaoOptions& opt, SNOptions sn)
    : ProjectedAttentionImpl(opt.qkv ? "kao_qkv" : "kao_kv", c, opt.sagan, sn) {
  op_ = opt.qkv ? AttentionOperator(kao_qkv_operator) : AttentionOperator(kao_kv_operator);
}

KaoPaperImpl::KaoPaperImpl(int64_t c, const KaoOptions& opt, SNOptions sn) : opt_(opt), c_(c) {
  wq = register_module("wq", SNConv2d(c, c, 1, 0, false, sn));
  wk = register_module("wk", SNConv2d(c, c, 1, 0, false, sn));
  wv = register_module("wv", SNConv2d(c, c, 1, 0, false, sn));
  gamma = register_parameter("gamma", torch::zeros({}));
}

torch::Tensor KaoPaperImpl::forward(const torch::Tensor& x, const torch::Tensor&) {
  const char* name = opt_.qkv ? "kao_qkv" : "kao_kv";
  check_context_input(name, x, c_);
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  // C as a B x c x (w+h) x 1 map so the 1x1 convs apply the linear maps to its columns.
  const torch::Tensor cx = kronecker_averages(x.flatten(2), h, w).unsqueeze(3);
  const torch::Tensor k = wk->forward(cx).flatten(2), v = wv->forward(cx).flatten(2);
  torch::Tensor o;
  if (opt_.qkv) {
    o = kronecker_outer_sum(dot_attention(wq->forward(cx).flatten(2), k, v), h, w);
  } else {
    o = dot_attention(wq->forward(x).flatten(2), k, v).view({b, c_, h, w});
  }
  return x + gamma * o;
}

namespace {
std::shared_ptr<const ContextOptions> parse_kao(ConfigNode& node, bool qkv) {
  auto o = std::make_shared<KaoOptions>();
  o->qkv = qkv;
  o->projections = node.choice("projections", o->projections, {"sagan", "paper"});
  o->sagan = parse_projection_options(node);
  return o;
}
}  // namespace

std::shared_ptr<const ContextOptions> parse_kao_kv_options(ConfigNode& node) {
  return parse_kao(node, false);
}
std::shared_ptr<const ContextOptions> parse_kao_qkv_options(ConfigNode& node) {
  return parse_kao(node, true);
}

ContextModule make_kao(const ContextSpec& spec) {
  const auto& opt = context_options<KaoOptions>(spec);
  if (opt.projections == "paper") return std::make_shared<KaoPaperImpl>(spec.channels, opt, spec.sn);
  return std::make_shared<KaoSaganImpl>(spec.channels, opt, spec.sn);
}

}  // namespace hamgan
