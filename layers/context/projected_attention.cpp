#include "layers/context/projected_attention.h"

#include "core/error.h"

namespace hamgan {

void check_context_input(const std::string& name, const torch::Tensor& x, int64_t channels) {
  if (x.dim() != 4 || x.size(1) != channels)
    fail(name, ": expected input B x ", channels, " x H x W, got ", x.sizes());
}

ProjectedAttentionImpl::ProjectedAttentionImpl(const std::string& name, int64_t c,
                                               const ProjectionOptions& opt, SNOptions sn)
    : name_(name), c_(c), ck_(c / opt.qk_divisor), cv_(c / opt.v_divisor) {
  if (ck_ < 1 || cv_ < 1)
    fail(name, ": ", c, " channels are too few for qk_divisor ", opt.qk_divisor, " and v_divisor ",
         opt.v_divisor);
  theta = register_module("theta", SNConv2d(c, ck_, 1, 0, false, sn));
  phi = register_module("phi", SNConv2d(c, ck_, 1, 0, false, sn));
  g = register_module("g", SNConv2d(c, cv_, 1, 0, false, sn));
  o = register_module("o", SNConv2d(cv_, c, 1, 0, false, sn));
  gamma = register_parameter("gamma", torch::zeros({}));
}

torch::Tensor ProjectedAttentionImpl::forward(const torch::Tensor& x, const torch::Tensor&) {
  check_context_input(name_, x, c_);
  const int64_t h = x.size(2), w = x.size(3);
  const torch::Tensor q = theta->forward(x).flatten(2);  // B x C/8 x N
  const torch::Tensor k = phi->forward(x).flatten(2);    // B x C/8 x N
  const torch::Tensor v = g->forward(x).flatten(2);      // B x C/2 x N
  return x + gamma * o->forward(op_(q, k, v, h, w));
}

ProjectionOptions parse_projection_options(ConfigNode& node) {
  ProjectionOptions p;
  p.qk_divisor = node.integer("qk_divisor", p.qk_divisor, 1, 1024);
  p.v_divisor = node.integer("v_divisor", p.v_divisor, 1, 1024);
  return p;
}

}  // namespace hamgan
