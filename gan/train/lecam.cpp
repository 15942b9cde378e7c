#include "gan/train/lecam.h"

#include <cmath>

#include "core/error.h"
#include "gan/train/distributed.h"

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

namespace {
class LeCamFeature : public StepFeature {
 public:
  LeCamFeature(double weight, double decay, torch::Device device)
      : weight_(weight), anchors_(decay, device), float_on_(torch::TensorOptions(device).dtype(torch::kFloat)) {}

  void begin_d_step(int64_t) override { term_ = torch::Tensor(); }

  torch::Tensor d_loss(const DMicroBatch& b) override {
    if (!anchors_.ready()) return {};
    const torch::Tensor r = lecam_loss(b.o_real, b.o_fake, anchors_.real(), anchors_.fake());
    accumulate_scaled(term_, r, b.scale);
    return r * weight_;
  }

  // The anchors follow the global batch's means: equal on every rank.
  void end_d_step(const torch::Tensor& mean_real, const torch::Tensor& mean_fake, DataParallel* dp) override {
    torch::Tensor m = torch::stack({mean_real, mean_fake});
    if (dp && dp->world_size() > 1) {
      dp->all_reduce_sum(m);
      m = m / static_cast<double>(dp->world_size());
    }
    anchors_.update(m[0], m[1]);
  }

  std::vector<torch::Tensor> stats() const override {
    return {term_.defined() ? term_ : torch::zeros({}, float_on_)};
  }

  std::vector<std::pair<std::string, torch::Tensor>> state() const override {
    return {{"lecam_anchors", anchors_.state()}};
  }
  // A run that turns LeCam on at a resume starts its anchors afresh.
  void restore(const CheckpointData& c) override {
    if (const auto s = c.find_train_state("lecam_anchors")) anchors_.set_state(*s);
  }

 private:
  double weight_;
  LeCamAnchors anchors_;
  torch::Tensor term_;  // R_LC over this D step's micro-batches
  torch::TensorOptions float_on_;
};
}  // namespace

std::unique_ptr<StepFeature> make_lecam_feature(const Config& cfg, torch::Device device) {
  return std::make_unique<LeCamFeature>(cfg.train.lecam_weight, cfg.train.lecam_decay, device);
}

}  // namespace hamgan
