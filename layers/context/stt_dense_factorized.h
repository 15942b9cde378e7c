// Tensor Dense Factorized Synthesizer (STT paper Sec. 3.3, Eq. 19-20): the dense
// synthesizer (Eq. 14-17) with each HW-row mode matrix Kronecker-decomposed,
//   A (HW x I) = A_1 (x) ... (x) A_N,  A_i in R^{rows[i] x cols_I[i]},
// prod(rows) = HW and prod(cols_I) = I for I = H, W, c. The 1 x I mode vectors stay dense
// (factoring them saves nothing). Defaults, rows = [H, W]: cols_h = [H, 1] (A_(H) =
// P (x) u), cols_w = [1, W], cols_c = [1, c].
#pragma once
#include "layers/context/stt_attention.h"

namespace hamgan {

struct SttDenseFactorizedOptions : SttCommonOptions {
  std::vector<int64_t> rows, cols_h, cols_w, cols_c;  // empty: the defaults above
};

class SttDenseFactorizedImpl : public SttAttentionImpl {
 public:
  SttDenseFactorizedImpl(const ContextSpec& spec, const SttDenseFactorizedOptions& opt);
  // The dense weights with the six HW-row matrices left undefined; filled from the factors.
  SttDenseWeights vectors;
  std::vector<torch::Tensor> zh_a2, zh_a3, zw_a1, zw_a3, zc_a1, zc_a2;

 protected:
  torch::Tensor logits(const torch::Tensor& query) override;
};

std::shared_ptr<const ContextOptions> parse_stt_dense_factorized_options(ConfigNode& node);
ContextModule make_stt_dense_factorized(const ContextSpec& spec);

}  // namespace hamgan
