#include "gan/train/lecam.h"

#include <cmath>

#include "core/error.h"

namespace hamgan {

torch::Tensor lecam_loss(const torch::Tensor& d_real, const torch::Tensor& d_fake, const torch::Tensor& anchor_real,
                         const torch::Tensor& anchor_fake) {
  return torch::relu(d_real - anchor_fake).square().mean() + torch::relu(anchor_real - d_fake).square().mean();
}

LeCamAnchors::LeCamAnchors(double decay, torch::Device device)
    : decay_(decay), ema_(torch::zeros({2}, torch::TensorOptions(device).dtype(torch::kFloat))) {}

// The EMA started at 0 weighs its t updates by 1 - decay^t in all; dividing by it debiases.
double LeCamAnchors::debias() const { return 1.0 / (1.0 - std::pow(decay_, static_cast<double>(steps_))); }

torch::Tensor LeCamAnchors::real() const { return ema_[0] * debias(); }
torch::Tensor LeCamAnchors::fake() const { return ema_[1] * debias(); }

void LeCamAnchors::update(const torch::Tensor& mean_real, const torch::Tensor& mean_fake) {
  const torch::Tensor now = torch::stack({mean_real.detach(), mean_fake.detach()}).to(torch::kFloat);
  ema_ = ema_ * decay_ + now * (1.0 - decay_);
  ++steps_;
}

torch::Tensor LeCamAnchors::state() const {
  // host read: at a checkpoint only, as the models' own state
  return torch::cat({ema_.detach().cpu(), torch::tensor({static_cast<float>(steps_)})});
}

void LeCamAnchors::set_state(const torch::Tensor& state) {
  if (state.numel() != 3 || state.scalar_type() != torch::kFloat)
    fail("LeCam anchors: expected 3 floats (real, fake, updates), got ", state.numel(), " of ", state.scalar_type());
  const torch::Tensor s = state.cpu();  // host read: at restore only
  ema_ = s.narrow(0, 0, 2).to(ema_.device());
  steps_ = static_cast<int64_t>(s[2].item<float>());  // host read: once, at restore
}

}  // namespace hamgan
