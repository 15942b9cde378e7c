#include "layers/context/stt_attention.h"

#include <cmath>

#include "core/error.h"

namespace hamgan {

void SttCommonOptions::fail_key(const std::string& key, const std::string& what) const {
  if (where) where->fail_key(key, what);
  fail("key '", key, "': ", what);
}

void parse_stt_common(ConfigNode& node, SttCommonOptions& o, bool uses_query) {
  parse_attention_options(node, o, uses_query);
  o.where = std::make_shared<const ConfigNode>(node);
}

namespace {
ProjectionNames stt_names(bool uses_query) {
  ProjectionNames n;
  n.q = uses_query ? "q" : "";
  n.k = "";
  n.v = n.paper_v = "v";
  return n;
}
}  // namespace

SttAttentionImpl::SttAttentionImpl(std::string name, const ContextSpec& spec,
                                   const SttCommonOptions& opt, bool uses_query)
    : AttentionImpl(std::move(name), spec.channels, spec.sn, opt, stt_names(uses_query),
                    spec.height, spec.width),
      uses_query_(uses_query) {
  if (height_ < 1 || width_ < 1)
    fail(name_, ": needs a positive feature size, got H=", height_, " W=", width_);
}

torch::Tensor SttAttentionImpl::branch(const torch::Tensor& x) {
  torch::Tensor qx;
  if (uses_query_) qx = query(x);  // paper: X itself
  return output(synthesized_attention(logits(qx), value(x)));
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
