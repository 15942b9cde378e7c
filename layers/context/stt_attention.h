// The tensor synthesizers (stt_*.h) on the attention base (attention.h): the operator only
// supplies the attention logits Z, and the branch is softmax(Z) V (Eq. 12-13) on the fixed
// H x W it was built for. Projections (STT paper Sec. 3.2, Eq. 11-13 for the paper form):
//   sagan: query q = W_q x (C/qk_divisor), v = W_v x (C/v_divisor), out = W_o (.) back to C;
//          no pooling (the synthesized map is HW x HW by construction).
//   paper: logits synthesized from the raw input X itself (c = C), V = X W_V with d = C,
//          no output projection.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "layers/context/attention.h"
#include "layers/context/stt_ops.h"

namespace hamgan {

struct SttCommonOptions : AttentionOptions {
  // The config node the options came from, so shape errors found at build time (when H, W
  // and C are known) name the key; null when built in code.
  std::shared_ptr<const ConfigNode> where;
  [[noreturn]] void fail_key(const std::string& key, const std::string& what) const;
};

// Reads projections, v_divisor and (for operators that use a query) qk_divisor.
void parse_stt_common(ConfigNode& node, SttCommonOptions& o, bool uses_query);

// The keys of the random synthesizers (stt_random, stt_random_factorized, stt_mixture).
template <class S>
Key<S> learned_key(bool S::*m) {
  return keys::boolean("learned", m, "false: the random synthesizer R is a fixed buffer (kept in checkpoints)");
}
template <class S>
Key<S> init_std_key(double S::*m) {
  return keys::real("init_std", m, closed(0, 100), "R (or each Kronecker factor R_i) drawn from N(0, init_std^2)");
}

class SttAttentionImpl : public AttentionImpl {
 protected:
  // State-dict names q, v, o (paper: v); q only for operators with a query.
  SttAttentionImpl(std::string name, const ContextSpec& spec, const SttCommonOptions& opt,
                   bool uses_query);

  torch::Tensor branch(const torch::Tensor& x) override;

  // The logits Z (B x N x N or N x N, N = H*W) from the query (B x c x H x W; undefined for
  // input-independent operators).
  virtual torch::Tensor logits(const torch::Tensor& query) = 0;

 private:
  bool uses_query_;
};

// --- parameters shared by several operators ---

// Registers the nine matrices of Eq. 14-16 as zh_a1 ... zc_a3, each uniform in
// +-1/sqrt(its input size) (nn.Linear's default range; the paper gives no init).
SttDenseWeights register_stt_dense(torch::nn::Module& m, int64_t h, int64_t w, int64_t c);

// Registers factors name_0 .. name_{N-1} of shapes rows[i] x cols[i], N(0, init_std), as
// parameters (learned) or buffers (fixed; kept in checkpoints so a run is reproducible).
std::vector<torch::Tensor> register_kron_factors(torch::nn::Module& m, const std::string& name,
                                                 const std::vector<int64_t>& rows,
                                                 const std::vector<int64_t>& cols,
                                                 double init_std, bool learned);

// `given` if non-empty else `def`; fails naming `key` unless its length is `length` (when
// > 0) and the product of its entries is `product`.
std::vector<int64_t> resolve_factors(const SttCommonOptions& o, const std::string& key,
                                     const std::vector<int64_t>& given,
                                     const std::vector<int64_t>& def, int64_t product,
                                     const std::string& product_name, size_t length = 0);

}  // namespace hamgan
