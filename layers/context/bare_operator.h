// Attention operators alone, without projections, on Q = K = V = X (B x C x N), as the KAO
// paper's Table 1 and the SAO paper's Table 2 measure them. One line per operator in
// bare_operator.cpp; a context module without an entry has no bare form.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace hamgan {

// An operator on flattened q, k, v (B x channels x N, N = h*w); returns B x p x h x w.
using AttentionOperator = std::function<torch::Tensor(
    const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t h, int64_t w)>;

struct BareOperator {
  AttentionOperator op;
  std::vector<torch::Tensor> params;  // learnable tensors the operator owns (SAO's w)
};

// Builds the operator for C channels; empty std::function when `name` has no bare form.
std::function<BareOperator(int64_t channels)> bare_operator(const std::string& name);

}  // namespace hamgan
