#include "layers/context/stt_dense_factorized.h"

#include <cmath>

namespace hamgan {

SttDenseFactorizedImpl::SttDenseFactorizedImpl(const ContextSpec& spec,
                                               const SttDenseFactorizedOptions& opt)
    : SttAttentionImpl("stt_dense_factorized", spec, opt, true) {
  const int64_t h = height_, w = width_, c = qk_channels(), n = h * w;
  const auto rows = resolve_factors(opt, "rows", opt.rows, {h, w}, n, "H*W");
  const auto ch = resolve_factors(opt, "cols_h", opt.cols_h, {h, 1}, h, "H", rows.size());
  const auto cw = resolve_factors(opt, "cols_w", opt.cols_w, {1, w}, w, "W", rows.size());
  const auto cc = resolve_factors(opt, "cols_c", opt.cols_c, {1, c}, c, "query channels c",
                                  rows.size());
  auto vec = [&](const std::string& name, int64_t size) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(size));
    return register_parameter(name, torch::empty({size}).uniform_(-bound, bound));
  };
  // Factor i uniform in +-1/sqrt(cols[i]) (nn.Linear's range per factor; no init in paper).
  auto mat = [&](const std::string& name, const std::vector<int64_t>& cols) {
    std::vector<torch::Tensor> f;
    for (size_t i = 0; i < rows.size(); ++i) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(cols[i]));
      f.push_back(register_parameter(name + "_" + std::to_string(i),
                                     torch::empty({rows[i], cols[i]}).uniform_(-bound, bound)));
    }
    return f;
  };
  vectors.zh_a1 = vec("zh_a1", h);
  zh_a2 = mat("zh_a2", cw);
  zh_a3 = mat("zh_a3", cc);
  zw_a1 = mat("zw_a1", ch);
  vectors.zw_a2 = vec("zw_a2", w);
  zw_a3 = mat("zw_a3", cc);
  zc_a1 = mat("zc_a1", ch);
  zc_a2 = mat("zc_a2", cw);
  vectors.zc_a3 = vec("zc_a3", c);
}

torch::Tensor SttDenseFactorizedImpl::logits(const torch::Tensor& query) {
  SttDenseWeights a = vectors;  // Eq. 19: each A = D(A) = A_1 (x) ... (x) A_N
  a.zh_a2 = kron_chain(zh_a2);
  a.zh_a3 = kron_chain(zh_a3);
  a.zw_a1 = kron_chain(zw_a1);
  a.zw_a3 = kron_chain(zw_a3);
  a.zc_a1 = kron_chain(zc_a1);
  a.zc_a2 = kron_chain(zc_a2);
  return stt_dense_logits(query, a);
}

std::shared_ptr<const ContextOptions> parse_stt_dense_factorized_options(ConfigNode& node) {
  auto o = std::make_shared<SttDenseFactorizedOptions>();
  parse_stt_common(node, *o, true);
  using F = SttDenseFactorizedOptions;
  static const KeyTable<F> table(OnResume::Model, {
      keys::integers("rows", &F::rows, 1, 1 << 20, "row sizes of the Kronecker factors of each HW-row matrix; []: [H, W]")
          .also("product H*W"),
      keys::integers("cols_h", &F::cols_h, 1, 1 << 20, "column sizes of the factors of the H-mode matrix; []: [H, 1]")
          .also("as many as `rows`, product H"),
      keys::integers("cols_w", &F::cols_w, 1, 1 << 20, "column sizes of the factors of the W-mode matrix; []: [1, W]")
          .also("as many as `rows`, product W"),
      keys::integers("cols_c", &F::cols_c, 1, 1 << 20,
                     "column sizes of the factors of the channel-mode matrix; []: [1, c]")
          .also("as many as `rows`, product c (the query channels)"),
  });
  table.read(node, *o);
  return o;
}

ContextModule make_stt_dense_factorized(const ContextSpec& spec) {
  return std::make_shared<SttDenseFactorizedImpl>(
      spec, context_options<SttDenseFactorizedOptions>(spec));
}

}  // namespace hamgan
