#include "gan/sample/sampler.h"

#include <algorithm>

#include <ATen/CPUGeneratorImpl.h>

#include "core/error.h"
#include "core/splitmix.h"
#include "layers/context/hamburger.h"
#include "gan/sample/truncated_normal.h"

namespace hamgan::sample {

Sampler::Sampler(const CheckpointData& ckpt, const SamplerOptions& opt, std::ostream& warn)
    : opt_(opt), path_(ckpt.path) {
  if (opt.batch < 1) fail("--batch ", opt.batch, ": expected >= 1");
  if (opt.ema && !ckpt.has_ema)
    warn << ckpt.path << ": no EMA generator stored (train.ema was off); sampling with G\n";
  uses_ema_ = opt.ema && ckpt.has_ema;
  if (opt.standing_batches < 0) fail("--standing-batches ", opt.standing_batches, ": expected >= 0");
  g_ = load_generator(ckpt, uses_ema_, opt.device, opt.standing_batches);
  g_->eval();
  z_dim_ = ckpt.config.generator.z_dim;
  n_classes_ = ckpt.config.model.n_classes;
}

torch::Tensor Sampler::latent(int64_t cls, int64_t k) const {
  return latent_for(opt_.seed, cls, k, z_dim_, opt_.truncation);
}

void Sampler::set_item_bases(const std::vector<SampleItem>& items, size_t first, size_t end) const {
  int64_t module = 0;
  for (const auto& m : g_->modules(/*include_self=*/false)) {
    auto* ham = m->as<HamburgerImpl>();
    if (!ham || !ham->draws_bases()) continue;
    ++module;
    std::vector<torch::Tensor> per_item;
    for (size_t i = first; i < end; ++i) {
      const uint64_t key = splitmix64(splitmix64(splitmix64(opt_.seed ^ 0x6a6d) ^ static_cast<uint64_t>(items[i].cls)) ^
                                      (static_cast<uint64_t>(items[i].k) << 8) ^ static_cast<uint64_t>(module));
      torch::Generator gen = at::detail::createCPUGenerator(key);
      per_item.push_back(ham->ham().random_bases(ham->groups(), ham->d(), ham->r(), gen, torch::kFloat));
    }
    ham->set_next_bases(torch::cat(per_item).to(opt_.device));
  }
}

torch::Tensor Sampler::generate(const torch::Tensor& z, const torch::Tensor& y) const {
  if (z.dim() != 2 || z.size(1) != z_dim_ || y.dim() != 1 || y.size(0) != z.size(0))
    fail("sampler: expected z [B, ", z_dim_, "] and labels [B], got ", z.sizes(), " and ", y.sizes());
  torch::InferenceMode guard;
  const torch::Tensor x = g_->forward(z.to(opt_.device), y.to(opt_.device, torch::kLong)).to(torch::kCPU, torch::kFloat);
  // host read: one flag a batch, of a tensor already on the host.
  if (!torch::isfinite(x).all().item<bool>())
    fail(path_, ": the ", uses_ema_ ? "EMA generator" : "generator", "'s output is not finite (NaN or Inf) for ",
         x.size(0) - torch::isfinite(x).flatten(1).all(1).sum().item<int64_t>(), " of ", x.size(0),
         " images of a batch: its weights have diverged; sample an earlier checkpoint");
  return x;
}

torch::Tensor Sampler::generate(const std::vector<SampleItem>& items) const {
  std::vector<torch::Tensor> out;
  for_each_batch(items, [&](size_t, const torch::Tensor& x) { out.push_back(x); });
  if (out.empty()) fail("sampler: nothing to sample");
  return torch::cat(out);
}

void Sampler::for_each_batch(const std::vector<SampleItem>& items,
                             const std::function<void(size_t, const torch::Tensor&)>& fn) const {
  for (size_t b = 0; b < items.size(); b += static_cast<size_t>(opt_.batch)) {
    const size_t e = std::min(items.size(), b + static_cast<size_t>(opt_.batch));
    std::vector<torch::Tensor> zs;
    std::vector<int64_t> ys;
    for (size_t i = b; i < e; ++i) {
      zs.push_back(latent(items[i].cls, items[i].k));
      ys.push_back(items[i].cls);
    }
    set_item_bases(items, b, e);
    fn(b, generate(torch::stack(zs), torch::tensor(ys, torch::kLong)));
  }
}

torch::Tensor to_uint8(const torch::Tensor& images) {
  return images.to(torch::kCPU, torch::kFloat).add(1.0).mul(127.5).round().clamp(0, 255).to(torch::kUInt8);
}

}  // namespace hamgan::sample
