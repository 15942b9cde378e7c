#include "layers/context/stt_attention.h"

#include <cmath>

#include "core/error.h"

namespace hamgan {

void SttCommonOptions::fail_key(const std::string& key, const std::string& what) const {
  if (where) where->fail_key(key, what);
  fail("key '", key, "': ", what);
}

void parse_stt_common(ConfigNode& node, SttCommonOptions& o, bool uses_query) {
  o.paper = node.boolean("paper", o.paper);
  if (uses_query) o.qk_divisor = node.integer("qk_divisor", o.qk_divisor, 1, 1024);
  o.v_divisor = node.integer("v_divisor", o.v_divisor, 1, 1024);
  o.where = std::make_shared<const ConfigNode>(node);
}

SttAttentionImpl::SttAttentionImpl(std::string name, const ContextSpec& spec,
                                   const SttCommonOptions& opt, bool uses_query)
    : name_(std::move(name)),
      channels_(spec.channels),
      height_(spec.height),
      width_(spec.width),
      uses_query_(uses_query),
      paper_(opt.paper) {
  const int64_t c = channels_;
  if (c < 1 || height_ < 1 || width_ < 1)
    fail(name_, ": needs positive channels and feature size, got C=", c, " H=", height_,
         " W=", width_);
  const int64_t ck = c / opt.qk_divisor, cv = paper_ ? c : c / opt.v_divisor;
  if ((uses_query && !paper_ && ck < 1) || cv < 1)
    fail(name_, ": ", c, " channels are too few for qk_divisor ", opt.qk_divisor,
         " and v_divisor ", opt.v_divisor);
  if (uses_query) {
    query_channels_ = paper_ ? c : ck;
    if (!paper_) q = register_module("q", SNConv2d(c, ck, 1, 0, false, spec.sn));
  }
  v = register_module("v", SNConv2d(c, cv, 1, 0, false, spec.sn));
  if (!paper_) o = register_module("o", SNConv2d(cv, c, 1, 0, false, spec.sn));
  gamma = register_parameter("gamma", torch::zeros({}));
}

torch::Tensor SttAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor&) {
  // H x W is baked into the operator's parameters (Sec. 3: A_(H) is HW x H, R is HW x HW).
  if (x.dim() != 4 || x.size(1) != channels_ || x.size(2) != height_ || x.size(3) != width_)
    fail(name_, ": expected input B x ", channels_, " x ", height_, " x ", width_,
         " (channels and context resolution it was built for), got ", x.sizes());
  torch::Tensor query;
  if (uses_query_) query = paper_ ? x : q->forward(x);
  torch::Tensor y = synthesized_attention(logits(query), v->forward(x));
  if (!paper_) y = o->forward(y);
  return x + gamma * y;
}

SttDenseWeights register_stt_dense(torch::nn::Module& m, int64_t h, int64_t w, int64_t c) {
  const int64_t n = h * w;
  auto mk = [&](const std::string& name, std::vector<int64_t> shape, int64_t fan_in) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    return m.register_parameter(name, torch::empty(shape).uniform_(-bound, bound));
  };
  SttDenseWeights a;
  a.zh_a1 = mk("zh_a1", {h}, h);
  a.zh_a2 = mk("zh_a2", {n, w}, w);
  a.zh_a3 = mk("zh_a3", {n, c}, c);
  a.zw_a1 = mk("zw_a1", {n, h}, h);
  a.zw_a2 = mk("zw_a2", {w}, w);
  a.zw_a3 = mk("zw_a3", {n, c}, c);
  a.zc_a1 = mk("zc_a1", {n, h}, h);
  a.zc_a2 = mk("zc_a2", {n, w}, w);
  a.zc_a3 = mk("zc_a3", {c}, c);
  return a;
}

std::vector<torch::Tensor> register_kron_factors(torch::nn::Module& m, const std::string& name,
                                                 const std::vector<int64_t>& rows,
                                                 const std::vector<int64_t>& cols,
                                                 double init_std, bool learned) {
  std::vector<torch::Tensor> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string key = name + "_" + std::to_string(i);
    torch::Tensor t = torch::randn({rows[i], cols[i]}) * init_std;
    out.push_back(learned ? m.register_parameter(key, t) : m.register_buffer(key, t));
  }
  return out;
}

std::vector<int64_t> resolve_factors(const SttCommonOptions& o, const std::string& key,
                                     const std::vector<int64_t>& given,
                                     const std::vector<int64_t>& def, int64_t product,
                                     const std::string& product_name, size_t length) {
  const std::vector<int64_t>& f = given.empty() ? def : given;
  auto show = [&] {
    std::string s = "[";
    for (size_t i = 0; i < f.size(); ++i) s += (i ? ", " : "") + std::to_string(f[i]);
    return s + "]";
  };
  if (length > 0 && f.size() != length)
    o.fail_key(key, "expected " + std::to_string(length) + " factors (as many as 'rows'), got " +
                        show());
  int64_t p = 1;
  for (auto x : f) p = p > product ? p : p * x;  // stop growing once too large
  if (p != product)
    o.fail_key(key, "factor shapes " + show() + " multiply to " + std::to_string(p) +
                        ", expected " + product_name + " = " + std::to_string(product));
  return f;
}

}  // namespace hamgan
