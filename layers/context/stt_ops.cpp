#include "layers/context/stt_ops.h"

#include "core/error.h"

namespace hamgan {

torch::Tensor stt_dense_logits(const torch::Tensor& q, const SttDenseWeights& a) {
  // X as the paper's H x W x c tensor, batched: B x H x W x c.
  const torch::Tensor x = q.permute({0, 2, 3, 1});
  // Each term contracts the reduced mode with its vector first, then expands the other two
  // modes by matrix products: Z_H = A2 (sum_h a1[h] X[h]) A3^T, and likewise (Eq. 14-16).
  // tensordot is on no autocast list in LibTorch 2.x and refuses a bf16 x with fp32 weights
  // (found by tests/test_host_reads.cpp's bf16 training steps): the weights take x's dtype
  // (1.13's autocast runs tensordot in fp32 either way).
  const auto as_x = [&x](const torch::Tensor& w) { return w.to(x.scalar_type()); };
  const torch::Tensor mh = torch::tensordot(x, as_x(a.zh_a1), {1}, {0});  // B x W x c
  const torch::Tensor mw = torch::tensordot(x, as_x(a.zw_a2), {2}, {0});  // B x H x c
  const torch::Tensor mc = torch::tensordot(x, as_x(a.zc_a3), {3}, {0});  // B x H x W
  // In-place sums keep one B x N x N buffer instead of five (matmul's backward needs its
  // inputs, not its output, so this is autograd-safe).
  torch::Tensor z = torch::matmul(torch::matmul(a.zh_a2, mh), a.zh_a3.t());
  z.add_(torch::matmul(torch::matmul(a.zw_a1, mw), a.zw_a3.t()));
  return z.add_(torch::matmul(torch::matmul(a.zc_a1, mc), a.zc_a2.t()));
}

torch::Tensor kron_chain(const std::vector<torch::Tensor>& factors) {
  if (factors.empty()) fail("kron_chain: no factors");
  torch::Tensor r = factors[0];
  for (size_t i = 1; i < factors.size(); ++i) r = torch::kron(r, factors[i]);
  return r;
}

torch::Tensor synthesized_attention(const torch::Tensor& logits, const torch::Tensor& v) {
  const int64_t n = v.size(2) * v.size(3);
  if (logits.size(-1) != n || logits.size(-2) != n)
    fail("synthesized_attention: logits ", logits.sizes(), " do not match ", n,
         " value positions of ", v.sizes());
  const torch::Tensor s = torch::softmax(logits, -1);
  return torch::matmul(v.flatten(2), s.transpose(-1, -2)).view(v.sizes());
}

}  // namespace hamgan
