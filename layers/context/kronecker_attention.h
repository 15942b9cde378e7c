// Kronecker attention operators (KAO; "Kronecker Attention Networks", Gao & Ji, ICLR 2020 submission,
// Sec. 3.1). For a map X (h x w x c): horizontal average H (w x c, mean over rows), lateral
// average L (h x c, mean over columns), C = [H^T, L^T] (c x (w+h)), Eq. 1, and
//   attn(Q, K, V) = V softmax(K^T Q)  with column-wise softmax (over keys).
//   kao_kv  (Eq. 2): O = attn(X_(3), C, C), hw outputs.
//   kao_qkv (Eq. 3): [H~^T, L~^T] = attn(C, C, C); output Y[:,:,k] = L~[:,k] (+) H~[:,k],
//                    the outer sum per channel.
// On the attention base (attention.h): projections sagan, or paper (Sec. 2.1:
// O = W_V V softmax((W_K K)^T W_Q Q), W_* c x c linear, applied after averaging since they
// commute with it; no output projection); y = x + gamma * O with gamma = 0 at init.
#pragma once
#include "layers/context/attention.h"

namespace hamgan {

// B x d x (h*w) -> C = [H^T, L^T] as B x d x (w + h) (Eq. 1).
torch::Tensor kronecker_averages(const torch::Tensor& t, int64_t h, int64_t w);
// V softmax(K^T Q), softmax over keys: q B x d x M, k B x d x P, v B x p x P -> B x p x M.
torch::Tensor dot_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
// [H~^T, L~^T] (B x p x (w + h)) -> B x p x h x w, Y[b,p,i,j] = L~[b,p,i] + H~[b,p,j] (Eq. 3).
torch::Tensor kronecker_outer_sum(const torch::Tensor& o, int64_t h, int64_t w);

// The operators on projected q, k, v (B x d x N); both return B x p x h x w.
torch::Tensor kao_kv_operator(const torch::Tensor& q, const torch::Tensor& k,
                              const torch::Tensor& v, int64_t h, int64_t w);
torch::Tensor kao_qkv_operator(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, int64_t h, int64_t w);

struct KaoOptions : AttentionOptions {
  bool qkv = false;  // kao_qkv vs kao_kv (set by the registry entry)
};

class KaoImpl : public AttentionImpl {
 public:
  KaoImpl(int64_t channels, const KaoOptions& opt, SNOptions sn);

 protected:
  torch::Tensor branch(const torch::Tensor& x) override;

 private:
  bool qkv_;
};

std::shared_ptr<const ContextOptions> parse_kao_kv_options(ConfigNode& node);
std::shared_ptr<const ContextOptions> parse_kao_qkv_options(ConfigNode& node);
ContextModule make_kao(const ContextSpec& spec);

}  // namespace hamgan
