// Tensor synthesizer operators (Zhu et al., "Synthesizer Based Efficient Self-Attention for
// Vision Tasks", Sec. 3) as free functions of the projected query q (B x c x H x W) and value
// v (B x d x H x W). Positions are flattened row-major (p = h * W + w); logits Z[i, j] score
// query position i against key position j, and the softmax runs over j.
#pragma once
#include <torch/torch.h>

#include <vector>

namespace hamgan {

// The nine mode matrices of Eq. 14-16 (paper's A_(1), A_(2), A_(3) per term), N = H*W:
//   Z_H: a1 (H), a2 (N x W), a3 (N x c)   -> Z_H[i,j] = sum a1[h] a2[i,w] a3[j,c] X[h,w,c]
//   Z_W: a1 (N x H), a2 (W), a3 (N x c)   -> Z_W[i,j] = sum a1[i,h] a2[w] a3[j,c] X[h,w,c]
//   Z_C: a1 (N x H), a2 (N x W), a3 (c)   -> Z_C[i,j] = sum a1[i,h] a2[j,w] a3[c] X[h,w,c]
// (the 1 x I matrices are stored as vectors).
struct SttDenseWeights {
  torch::Tensor zh_a1, zh_a2, zh_a3;
  torch::Tensor zw_a1, zw_a2, zw_a3;
  torch::Tensor zc_a1, zc_a2, zc_a3;
};

// Z = Z_H + Z_W + Z_C (Eq. 14-17) for q: B x c x H x W; returns B x N x N.
torch::Tensor stt_dense_logits(const torch::Tensor& q, const SttDenseWeights& a);

// A_1 (x) A_2 (x) ... (x) A_N, the Kronecker chain of Eq. 19 and Eq. 21 (Eq. 10 per pair).
torch::Tensor kron_chain(const std::vector<torch::Tensor>& factors);

// Y = Softmax(Z) V (Eq. 12-13, 17, 18, 21, 23). logits: B x N x N or N x N (input-independent
// R); v: B x d x H x W with N = H*W. Returns B x d x H x W.
torch::Tensor synthesized_attention(const torch::Tensor& logits, const torch::Tensor& v);

}  // namespace hamgan
