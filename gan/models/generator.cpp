#include "gan/models/generator.h"

#include "core/error.h"
#include "gan/config/arch.h"

namespace hamgan {

GeneratorImpl::GeneratorImpl(const ModelConfig& model, const GeneratorConfig& g)
    : z_dim_(g.z_dim), hier_(g.hier) {
  const auto arch = generator_arch(model.resolution, g.ch, g.ch_mult);
  const SNOptions sn{model.sn_eps, 1};
  bottom_ch_ = arch.front().in;
  CondSpec cond{CondKind::labels, model.n_classes};
  int64_t z_in = g.z_dim;
  if (g.shared_dim > 0) {
    shared_ = register_module("shared", torch::nn::Embedding(model.n_classes, g.shared_dim));
    cond = {CondKind::vector, g.shared_dim};
    if (hier_) {  // BigGAN: one z chunk for the input, one per block
      chunk_ = g.z_dim / static_cast<int64_t>(arch.size() + 1);
      z_in = chunk_;
      cond.dim += chunk_;
    }
  }
  linear_ = register_module("linear", SNLinear(z_in, bottom_ch_ * 16, true, sn));
  for (size_t i = 0; i < arch.size(); ++i) {
    blocks_->push_back(GBlock(arch[i].in, arch[i].out, arch[i].resample, cond, model.bn_eps, sn));
  }
  register_module("blocks", blocks_);
  context_.place(*this, g.context, arch, cond, model.bn_eps, sn, "generator");
  out_bn_ = register_module(
      "out_bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(arch.back().out).eps(model.bn_eps)));
  out_conv_ = register_module("out_conv", SNConv2d(arch.back().out, model.image_channels, 3, 1, true, sn));
}

torch::Tensor GeneratorImpl::forward(const torch::Tensor& z, const torch::Tensor& y, Trace* trace) {
  if (z.dim() != 2 || z.size(1) != z_dim_)
    fail("generator: expected z of shape B x ", z_dim_, ", got ", z.sizes());
  const int64_t nb = static_cast<int64_t>(blocks_->size());
  std::vector<torch::Tensor> conds(nb, y);
  torch::Tensor z0 = z;
  if (shared_) {
    const torch::Tensor e = shared_->forward(y);
    if (hier_) {
      const auto zs = z.split(chunk_, 1);
      z0 = zs[0];
      for (int64_t i = 0; i < nb; ++i) conds[i] = torch::cat({e, zs[i + 1]}, 1);
    } else {
      std::fill(conds.begin(), conds.end(), e);
    }
  }
  torch::Tensor h = linear_->forward(z0).view({z.size(0), bottom_ch_, 4, 4});
  record(trace, "linear", h, linear_.get());
  for (int64_t i = 0; i < nb; ++i) {
    auto block = blocks_[i]->as<GBlockImpl>();
    h = block->forward(h, conds[i]);
    record(trace, "blocks." + std::to_string(i), h, block);
    if (i == context_.after) {
      h = context_.module->forward(h, conds[i]);
      record(trace, "context", h, context_.module.get());
    }
  }
  h = out_conv_->forward(torch::relu(batch_norm_2d(*out_bn_, h, reducer_)));
  record(trace, "out_bn+out_conv", h, nullptr);
  if (trace) trace->back().params = count_params(*out_bn_) + count_params(*out_conv_);
  return torch::tanh(h);
}

void GeneratorImpl::set_batch_reducer(BatchReducer* r) {
  reducer_ = r;
  for (const auto& m : modules(/*include_self=*/false))
    if (auto* bn = m->as<CondBatchNorm2dImpl>()) bn->set_batch_reducer(r);
}

}  // namespace hamgan
