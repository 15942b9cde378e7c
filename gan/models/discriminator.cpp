#include "gan/models/discriminator.h"

#include "core/error.h"
#include "gan/models/arch.h"

namespace hamgan {

DiscriminatorImpl::DiscriminatorImpl(const ModelConfig& model, const DiscriminatorConfig& d) {
  const auto arch = discriminator_arch(model.resolution, d.ch, model.image_channels);
  const SNOptions sn{model.sn_eps, 1};
  for (size_t i = 0; i < arch.size(); ++i) {
    blocks_->push_back(DBlock(arch[i].in, arch[i].out, /*preactivation=*/i > 0, arch[i].resample, sn));
  }
  register_module("blocks", blocks_);
  context_.place(*this, d.context, arch, CondSpec{}, model.bn_eps, sn, "discriminator");
  linear_ = register_module("linear", SNLinear(arch.back().out, 1, true, sn));
  embed_ = register_module("embed", SNEmbedding(model.n_classes, arch.back().out, sn));
}

torch::Tensor DiscriminatorImpl::forward(const torch::Tensor& x, const torch::Tensor& y, Trace* trace) {
  torch::Tensor h = x;
  for (int64_t i = 0; i < static_cast<int64_t>(blocks_->size()); ++i) {
    auto block = blocks_[i]->as<DBlockImpl>();
    h = block->forward(h);
    record(trace, "blocks." + std::to_string(i), h, block);
    if (i == context_.after) {
      h = context_.module->forward(h, {});
      record(trace, "context", h, context_.module.get());
    }
  }
  h = torch::relu(h).sum({2, 3});
  torch::Tensor out = linear_->forward(h).squeeze(1);
  record(trace, "linear", out, linear_.get());
  out = out + (embed_->forward(y) * h).sum(1);
  record(trace, "embed (projection)", out, embed_.get());
  return out;
}

}  // namespace hamgan
