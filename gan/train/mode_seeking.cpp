#include "gan/train/mode_seeking.h"

namespace hamgan {

namespace {
constexpr double kEps = 1e-5;  // the authors' code

// [B, B]: the mean absolute difference of rows i and j of x [B, F], by cdist's L1 distance
// (no B x B x F intermediate: at ImageNet-128's micro-batches that would be gigabytes).
torch::Tensor mean_abs_distances(const torch::Tensor& x) {
  return torch::cdist(x, x, /*p=*/1.0) / static_cast<double>(x.size(1));
}
}  // namespace

torch::Tensor mode_seeking_loss(const torch::Tensor& fake, const torch::Tensor& z, const torch::Tensor& y) {
  const auto acc = fake.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  const int64_t b = fake.size(0);
  // Pairs i < j of one label; the means over them, as sums (the count cancels in the ratio).
  const torch::Tensor pairs = y.view({b, 1}).eq(y.view({1, b})).triu(1).to(acc);
  const torch::Tensor images = (mean_abs_distances(fake.reshape({b, -1}).to(acc)) * pairs).sum();
  const torch::Tensor latents = (mean_abs_distances(z.reshape({b, -1}).to(acc)) * pairs).sum();
  // Without a pair: images = 0 and latents clamped, a finite 1 / eps times 0.
  const torch::Tensor any_pair = pairs.sum().gt(0).to(acc);
  return any_pair / (images / latents.clamp_min(1e-30) + kEps);
}

namespace {
class ModeSeekingFeature : public StepFeature {
 public:
  ModeSeekingFeature(double lambda, torch::Device device)
      : lambda_(lambda), float_on_(torch::TensorOptions(device).dtype(torch::kFloat)) {}

  // Every iteration begins with its D steps: the statistic starts afresh there.
  void begin_d_step(int64_t) override {
    term_ = torch::zeros({}, float_on_);
    weight_ = torch::zeros({}, float_on_);
  }

  torch::Tensor g_loss(const GMicroBatch& b) override {
    const torch::Tensor l = mode_seeking_loss(b.fake, b.z, b.y);
    // The step's mean over the micro-batches that had a pair (l = 0 marks those that had none).
    const torch::Tensor v = l.detach().to(torch::kFloat);
    term_ = term_ + v * b.scale;
    weight_ = weight_ + v.gt(0).to(torch::kFloat) * b.scale;
    return l * lambda_;
  }

  std::vector<torch::Tensor> stats() const override {
    return {term_.defined() ? term_ / weight_.clamp_min(1e-30) : torch::zeros({}, float_on_)};
  }

 private:
  double lambda_;
  torch::TensorOptions float_on_;
  torch::Tensor term_, weight_;  // sum of scale * L_ms, sum of scale over micro-batches with a pair
};
}  // namespace

std::unique_ptr<StepFeature> make_mode_seeking_feature(const Config& cfg, torch::Device device) {
  return std::make_unique<ModeSeekingFeature>(cfg.train.mode_seeking, device);
}

}  // namespace hamgan
