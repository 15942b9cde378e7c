// Siamese attention operator (SAO; "Siamese Attention Networks", ICLR submission, Sec. 3.1-3.2).
// Sia-sim_w(a, b) = (a + b)^T w (Eq. 4) with 1/N normalization gives (Eq. 5-6)
//   O = v_bar w^T Q + (1/N) V K^T w 1^T,
// computed as K^T w and w^T Q first: O(N d) time, no N x N matrix.
// On the attention base (attention.h): projections sagan (w in R^{C/8}) or paper (Sec. 3.3:
// only the value matrix is transformed, Q = K = X, w in R^C, no output projection);
// y = x + gamma O.
#pragma once
#include "layers/context/attention.h"

namespace hamgan {

// q, k: B x d x N; v: B x p x N; w: d. Returns B x p x N. When q and k are the same tensor
// w^T Q is computed once (Sec. 3.2).
torch::Tensor siamese_attention(const torch::Tensor& q, const torch::Tensor& k,
                                const torch::Tensor& v, const torch::Tensor& w);

struct SaoOptions : AttentionOptions {};

// w ~ N(0, 1/d): the paper uses Xavier init, which for a d-vector has this variance scale.
torch::Tensor init_siamese_weight(int64_t d);

class SaoImpl : public AttentionImpl {
 public:
  SaoImpl(int64_t channels, const SaoOptions& opt, SNOptions sn);
  torch::Tensor sim_w;  // w, one weight per query/key channel

 protected:
  torch::Tensor branch(const torch::Tensor& x) override;
};

std::shared_ptr<const ContextOptions> parse_sao_options(ConfigNode& node);
ContextModule make_sao(const ContextSpec& spec);

}  // namespace hamgan
