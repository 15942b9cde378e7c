#include "layers/context/self_attention.h"

#include "core/error.h"

namespace hamgan {

SelfAttentionImpl::SelfAttentionImpl(int64_t c, const SelfAttentionOptions& opt, SNOptions sn)
    : opt_(opt) {
  const int64_t ck = c / opt.qk_divisor, cv = c / opt.v_divisor;
  if (ck < 1 || cv < 1)
    fail("self_attention: ", c, " channels are too few for qk_divisor ", opt.qk_divisor,
         " and v_divisor ", opt.v_divisor);
  theta = register_module("theta", SNConv2d(c, ck, 1, 0, false, sn));
  phi = register_module("phi", SNConv2d(c, ck, 1, 0, false, sn));
  g = register_module("g", SNConv2d(c, cv, 1, 0, false, sn));
  o = register_module("o", SNConv2d(cv, c, 1, 0, false, sn));
  gamma = register_parameter("gamma", torch::zeros({}));
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor&) {
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  if (opt_.pool && (h % 2 || w % 2))
    fail("self_attention: pooling needs even feature sizes, got ", h, "x", w);
  torch::Tensor q = theta->forward(x).flatten(2);     // B x C/8 x N
  torch::Tensor k = phi->forward(x), v = g->forward(x);
  if (opt_.pool) {
    k = torch::max_pool2d(k, {2, 2});
    v = torch::max_pool2d(v, {2, 2});
  }
  k = k.flatten(2);                                   // B x C/8 x N'
  v = v.flatten(2);                                   // B x C/2 x N'
  const torch::Tensor beta = torch::softmax(torch::bmm(q.transpose(1, 2), k), -1);  // B x N x N'
  const torch::Tensor out = torch::bmm(v, beta.transpose(1, 2)).view({b, -1, h, w});
  return x + gamma * o->forward(out);
}

std::shared_ptr<const ContextOptions> parse_self_attention_options(ConfigNode& node) {
  auto o = std::make_shared<SelfAttentionOptions>();
  o->qk_divisor = node.integer("qk_divisor", o->qk_divisor, 1, 1024);
  o->v_divisor = node.integer("v_divisor", o->v_divisor, 1, 1024);
  o->pool = node.boolean("pool", o->pool);
  return o;
}

ContextModule make_self_attention(const ContextSpec& spec) {
  return std::make_shared<SelfAttentionImpl>(
      spec.channels, context_options<SelfAttentionOptions>(spec), spec.sn);
}

}  // namespace hamgan
