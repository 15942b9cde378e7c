#include "layers/context/attention.h"

#include "core/error.h"

namespace hamgan {

namespace {
KeyTable<AttentionOptions> attention_table(bool uses_query_or_key, bool paper_form) {
  using A = AttentionOptions;
  Words<Projections> words = {{Projections::sagan, "sagan"}};
  if (paper_form) words.push_back({Projections::paper, "paper"});
  std::vector<Key<A>> rows = {keys::word(
      "projections", &A::projections, words,
      "the branch's 1x1 maps: SAGAN's (q, k with C/`qk_divisor` channels, v with C/`v_divisor`, an output map) "
      "or the operator paper's own")};
  if (uses_query_or_key)
    rows.push_back(keys::integer("qk_divisor", &A::qk_divisor, 1, 1024, "SAGAN form: query and key channels = C / `qk_divisor`"));
  rows.push_back(keys::integer("v_divisor", &A::v_divisor, 1, 1024, "SAGAN form: value channels = C / `v_divisor`"));
  return KeyTable<A>(OnResume::Model, rows);
}
}  // namespace

void parse_attention_options(ConfigNode& node, AttentionOptions& o, bool uses_query_or_key, bool paper_form) {
  if (node.has("paper"))
    node.fail_key("paper", "this key was replaced by 'projections': use projections: paper|sagan");
  static const KeyTable<AttentionOptions> tables[2][2] = {
      {attention_table(false, false), attention_table(false, true)},
      {attention_table(true, false), attention_table(true, true)}};
  tables[uses_query_or_key][paper_form].read(node, o);
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
