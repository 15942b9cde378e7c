#include "layers/context/attention.h"

#include "core/error.h"

namespace hamgan {

void parse_attention_options(ConfigNode& node, AttentionOptions& o, bool uses_query_or_key,
                             const std::vector<std::string>& allowed) {
  if (node.has("paper"))
    node.fail_key("paper", "this key was replaced by 'projections': use projections: paper|sagan");
  const bool paper = node.choice("projections", "sagan", allowed) == "paper";
  o.projections = paper ? Projections::paper : Projections::sagan;
  if (uses_query_or_key) o.qk_divisor = node.integer("qk_divisor", o.qk_divisor, 1, 1024);
  o.v_divisor = node.integer("v_divisor", o.v_divisor, 1, 1024);
}

AttentionImpl::AttentionImpl(std::string name, int64_t c, SNOptions sn,
                             const AttentionOptions& opt, const ProjectionNames& names,
                             int64_t height, int64_t width)
    : name_(std::move(name)),
      channels_(c),
      height_(height),
      width_(width),
      projections_(opt.projections) {
  if (c < 1) fail(name_, ": needs positive channels, got C=", c);
  const bool has_qk = !names.q.empty() || !names.k.empty();
  if (projections_ == Projections::sagan) {
    qk_channels_ = c / opt.qk_divisor;
    v_channels_ = c / opt.v_divisor;
    if ((has_qk && qk_channels_ < 1) || v_channels_ < 1)
      fail(name_, ": ", c, " channels are too few for qk_divisor ", opt.qk_divisor,
           " and v_divisor ", opt.v_divisor);
    if (!names.q.empty()) q = register_module(names.q, SNConv2d(c, qk_channels_, 1, 0, false, sn));
    if (!names.k.empty()) k = register_module(names.k, SNConv2d(c, qk_channels_, 1, 0, false, sn));
    v = register_module(names.v, SNConv2d(c, v_channels_, 1, 0, false, sn));
    o = register_module(names.o, SNConv2d(v_channels_, c, 1, 0, false, sn));
  } else {
    qk_channels_ = v_channels_ = c;
    if (!names.q.empty() && !names.paper_q.empty())
      q = register_module(names.paper_q, SNConv2d(c, c, 1, 0, false, sn));
    if (!names.k.empty() && !names.paper_k.empty())
      k = register_module(names.paper_k, SNConv2d(c, c, 1, 0, false, sn));
    v = register_module(names.paper_v, SNConv2d(c, c, 1, 0, false, sn));
  }
  if (!has_qk) qk_channels_ = 0;
  gamma = register_parameter("gamma", torch::zeros({}));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const torch::Tensor&) {
  if (height_ > 0) {
    // H x W is baked into the operator's parameters (e.g. STT's HW x HW logits).
    if (x.dim() != 4 || x.size(1) != channels_ || x.size(2) != height_ || x.size(3) != width_)
      fail(name_, ": expected input B x ", channels_, " x ", height_, " x ", width_,
           " (channels and context resolution it was built for), got ", x.sizes());
  } else if (x.dim() != 4 || x.size(1) != channels_) {
    fail(name_, ": expected input B x ", channels_, " x H x W, got ", x.sizes());
  }
  return x + gamma * branch(x);
}

AttentionImpl::Qkv AttentionImpl::project_flat(const torch::Tensor& x) {
  Qkv p;
  p.q = query(x).flatten(2);
  p.k = !k && !q ? p.q : key(x).flatten(2);
  p.v = value(x).flatten(2);
  return p;
}

}  // namespace hamgan
