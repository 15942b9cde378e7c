// The shared SAGAN wrapping for attention-like context modules, so that operators are
// compared and not wrappers (Zhang et al. 2019, Sec. 3):
//   q = W_q x (C/8), k = W_k x (C/8), v = W_v x (C/2)   (1x1 SN convs, no bias)
//   y = x + gamma * W_o op(q, k, v, H, W),               gamma = 0 at init.
// The operator sees flattened maps (B x channels x N, N = H*W) and returns B x C/2 x H x W.
#pragma once
#include <functional>

#include "layers/context/context.h"

namespace hamgan {

using AttentionOperator = std::function<torch::Tensor(
    const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, int64_t h, int64_t w)>;

struct ProjectionOptions {
  int64_t qk_divisor = 8;  // query/key channels = C / qk_divisor
  int64_t v_divisor = 2;   // value channels = C / v_divisor
};

class ProjectedAttentionImpl : public ContextModuleImpl {
 public:
  // name: the module's name for error messages. op may capture parameters that a derived
  // class registers on this module (handles stay valid across to(): LibTorch uses set_data).
  ProjectedAttentionImpl(const std::string& name, int64_t channels, const ProjectionOptions& opt,
                         SNOptions sn);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond = {}) override;

  int64_t qk_channels() const { return ck_; }
  int64_t v_channels() const { return cv_; }

  SNConv2d theta{nullptr}, phi{nullptr}, g{nullptr}, o{nullptr};
  torch::Tensor gamma;

 protected:
  AttentionOperator op_;

 private:
  std::string name_;
  int64_t c_, ck_, cv_;
};

// Reads qk_divisor / v_divisor from a module's options block.
ProjectionOptions parse_projection_options(ConfigNode& node);

// Checks x is B x C x H x W with the expected channel count.
void check_context_input(const std::string& name, const torch::Tensor& x, int64_t channels);

}  // namespace hamgan
