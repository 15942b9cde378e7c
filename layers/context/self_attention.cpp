#include "layers/context/self_attention.h"

#include "core/error.h"

namespace hamgan {

SelfAttentionImpl::SelfAttentionImpl(int64_t c, const SelfAttentionOptions& opt, SNOptions sn)
    : AttentionImpl("self_attention", c, sn, opt, ProjectionNames{}), pool_(opt.pool) {
  if (opt.projections != Projections::sagan)
    fail("self_attention: only projections sagan exist (SAGAN is its paper)");
  theta = q, phi = k, g = v;
}

torch::Tensor SelfAttentionImpl::branch(const torch::Tensor& x) {
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  if (pool_ && (h % 2 || w % 2))
    fail("self_attention: pooling needs even feature sizes, got ", h, "x", w);
  torch::Tensor qf = query(x).flatten(2);  // B x C/8 x N
  torch::Tensor kf = key(x), vf = value(x);
  if (pool_) {
    kf = torch::max_pool2d(kf, {2, 2});
    vf = torch::max_pool2d(vf, {2, 2});
  }
  kf = kf.flatten(2);  // B x C/8 x N'
  vf = vf.flatten(2);  // B x C/2 x N'
  const torch::Tensor beta = torch::softmax(torch::bmm(qf.transpose(1, 2), kf), -1);  // B x N x N'
  return output(torch::bmm(vf, beta.transpose(1, 2)).view({b, -1, h, w}));
}

std::shared_ptr<const ContextOptions> parse_self_attention_options(ConfigNode& node) {
  auto o = std::make_shared<SelfAttentionOptions>();
  parse_attention_options(node, *o, true, /*paper_form=*/false);
  static const KeyTable<SelfAttentionOptions> table(OnResume::Model, {
      keys::boolean("pool", &SelfAttentionOptions::pool, "2x2 max pooling of keys and values (SAGAN)"),
  });
  table.read(node, *o);
  return o;
}

ContextModule make_self_attention(const ContextSpec& spec) {
  return std::make_shared<SelfAttentionImpl>(
      spec.channels, context_options<SelfAttentionOptions>(spec), spec.sn);
}

}  // namespace hamgan
