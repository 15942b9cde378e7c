#include "layers/context/bare_operator.h"

#include <map>

#include "layers/context/kronecker_attention.h"
#include "layers/context/siamese_attention.h"

namespace hamgan {

namespace {

// "Attn+Pool" of the papers' tables = SAGAN's operator: 2x2 max pool on K and V.
BareOperator pooled_attention(int64_t) {
  return {[](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t h,
             int64_t w) {
            auto pool = [&](const torch::Tensor& t) {
              return torch::max_pool2d(t.view({t.size(0), t.size(1), h, w}), {2, 2}).flatten(2);
            };
            const torch::Tensor kp = pool(k);
            const torch::Tensor o = dot_attention(q, kp, v.is_same(k) ? kp : pool(v));
            return o.view({o.size(0), o.size(1), h, w});
          },
          {}};
}

BareOperator sao(int64_t c) {
  const torch::Tensor w = init_siamese_weight(c);
  return {[w](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t h,
              int64_t wd) {
            const torch::Tensor o = siamese_attention(q, k, v, w);
            return o.view({o.size(0), o.size(1), h, wd});
          },
          {w}};
}

}  // namespace

std::function<BareOperator(int64_t)> bare_operator(const std::string& name) {
  static const std::map<std::string, std::function<BareOperator(int64_t)>> ops = {
      {"self_attention", pooled_attention},
      {"kao_kv", [](int64_t) { return BareOperator{kao_kv_operator, {}}; }},
      {"kao_qkv", [](int64_t) { return BareOperator{kao_qkv_operator, {}}; }},
      {"sao", sao},
  };
  const auto it = ops.find(name);
  return it == ops.end() ? std::function<BareOperator(int64_t)>() : it->second;
}

}  // namespace hamgan
