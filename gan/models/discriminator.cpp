#include "gan/models/discriminator.h"

#include <set>

#include "core/error.h"
#include "gan/config/arch.h"
#include "layers/minibatch_std.h"
#include "layers/spectral_norm.h"

namespace hamgan {

DiscriminatorImpl::DiscriminatorImpl(const ModelConfig& model, const DiscriminatorConfig& d)
    : mbstd_group_(d.mbstd_group), mbstd_features_(d.mbstd_features) {
  const auto arch = discriminator_arch(model.resolution, d.ch, model.image_channels, d.ch_mult);
  const SNOptions sn{model.sn_eps, 1};
  for (size_t i = 0; i < arch.size(); ++i) {
    const bool last = i + 1 == arch.size();
    const int64_t in = arch[i].in + (last && mbstd_group_ > 0 ? mbstd_features_ : 0);
    blocks_->push_back(DBlock(in, arch[i].out, /*preactivation=*/i > 0, arch[i].resample, sn));
  }
  register_module("blocks", blocks_);
  context_.place(*this, d.context, arch, CondSpec{}, model.bn_eps, sn, "discriminator");
  linear_ = register_module("linear", SNLinear(arch.back().out, 1, true, sn));
  embed_ = register_module("embed", SNEmbedding(model.n_classes, arch.back().out, sn));
}

torch::Tensor DiscriminatorImpl::forward(const torch::Tensor& x, const torch::Tensor& y, Trace* trace) {
  torch::Tensor h = x;
  const int64_t last = static_cast<int64_t>(blocks_->size()) - 1;
  for (int64_t i = 0; i <= last; ++i) {
    auto block = blocks_[i]->as<DBlockImpl>();
    if (i == last && mbstd_group_ > 0) h = minibatch_std(h, mbstd_group_, mbstd_features_);
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

std::vector<torch::nn::Module*> DiscriminatorImpl::frozen_modules() const {
  std::vector<torch::nn::Module*> out;
  for (int64_t i = 0; i < frozen_; ++i) out.push_back(blocks_->ptr(static_cast<size_t>(i)).get());
  if (context_.module && context_.after + 1 < frozen_) out.push_back(context_.module.get());
  return out;
}

void DiscriminatorImpl::freeze_blocks(int64_t k, bool estimate_sigma) {
  if (k < 0 || k > num_blocks())
    fail("train.freeze_d ", k, ": expected 0..", num_blocks(), " (the discriminator's blocks)");
  frozen_ = k;
  estimate_sigma_ = estimate_sigma;
  for (auto* m : frozen_modules())
    for (auto& p : m->parameters()) p.requires_grad_(false);
  train(is_training());
}

std::vector<torch::Tensor> DiscriminatorImpl::trainable_parameters() const {
  std::set<const c10::TensorImpl*> frozen;
  for (auto* m : frozen_modules())
    for (const auto& p : m->parameters()) frozen.insert(p.unsafeGetTensorImpl());
  std::vector<torch::Tensor> out;
  for (const auto& p : parameters())
    if (!frozen.count(p.unsafeGetTensorImpl())) out.push_back(p);
  return out;
}

void DiscriminatorImpl::set_trainable(bool on) {
  for (auto& p : trainable_parameters()) p.requires_grad_(on);
}

void DiscriminatorImpl::train(bool on) {
  torch::nn::Module::train(on);
  for (auto* m : frozen_modules()) {
    m->eval();
    if (!estimate_sigma_) continue;
    for (const auto& sub : m->modules())
      if (dynamic_cast<SNConv2dImpl*>(sub.get()) || dynamic_cast<SNLinearImpl*>(sub.get()) ||
          dynamic_cast<SNEmbeddingImpl*>(sub.get()))
        sub->train(on);
  }
}

}  // namespace hamgan
