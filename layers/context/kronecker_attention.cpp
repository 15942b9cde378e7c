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

namespace {
ProjectionNames kao_names() {
  ProjectionNames n;
  n.paper_q = "wq";
  n.paper_k = "wk";
  return n;
}
}  // namespace

KaoImpl::KaoImpl(int64_t c, const KaoOptions& opt, SNOptions sn)
    : AttentionImpl(opt.qkv ? "kao_qkv" : "kao_kv", c, sn, opt, kao_names()), qkv_(opt.qkv) {}

torch::Tensor KaoImpl::branch(const torch::Tensor& x) {
  const int64_t h = x.size(2), w = x.size(3);
  if (projections() == Projections::sagan) {
    const Qkv p = project_flat(x);
    return output(qkv_ ? kao_qkv_operator(p.q, p.k, p.v, h, w) : kao_kv_operator(p.q, p.k, p.v, h, w));
  }
  // Paper: the maps act on C, a B x c x (w+h) x 1 map, so the 1x1 convs apply them to its
  // columns (w + h of them instead of h * w).
  const torch::Tensor cx = kronecker_averages(x.flatten(2), h, w).unsqueeze(3);
  const torch::Tensor kc = key(cx).flatten(2), vc = value(cx).flatten(2);
  if (qkv_) return kronecker_outer_sum(dot_attention(query(cx).flatten(2), kc, vc), h, w);
  return dot_attention(query(x).flatten(2), kc, vc).view({x.size(0), -1, h, w});
}

namespace {
std::shared_ptr<const ContextOptions> parse_kao(ConfigNode& node, bool qkv) {
  auto o = std::make_shared<KaoOptions>();
  o->qkv = qkv;
  parse_attention_options(node, *o, true);
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
  return std::make_shared<KaoImpl>(spec.channels, context_options<KaoOptions>(spec), spec.sn);
}

}  // namespace hamgan
