#include "gan/train/r1.h"

#include "core/error.h"

namespace hamgan {

torch::Tensor r1_penalty(const torch::Tensor& d_real, const torch::Tensor& x) {
  const torch::Tensor g = torch::autograd::grad({d_real.sum()}, {x}, /*grad_outputs=*/{}, /*retain_graph=*/true,
                                                /*create_graph=*/true)[0];
  // Summed in fp32 at least (bf16 under autocast; double stays double).
  return g.to(at::promote_types(g.scalar_type(), torch::kFloat)).square().flatten(1).sum(1).mean();
}

namespace {
// R1 (on_fakes false) or R2 (true): one penalty, on the images of one side of D's batch.
class GradientPenaltyFeature : public StepFeature {
 public:
  GradientPenaltyFeature(bool on_fakes, double gamma, int64_t every, torch::Device device)
      : fakes_(on_fakes), gamma_(gamma), every_(every),
        last_(torch::zeros({}, torch::TensorOptions(device).dtype(torch::kFloat))) {}

  void begin_d_step(int64_t d_step) override {
    on_ = d_step % every_ == 0;
    penalty_ = torch::Tensor();
  }
  bool wants_real_grad() const override { return on_ && !fakes_; }
  bool wants_fake_grad() const override { return on_ && fakes_; }

  torch::Tensor d_loss(const DMicroBatch& b) override {
    if (!on_) return {};
    const torch::Tensor p = fakes_ ? r1_penalty(b.o_fake, b.x_fake) : r1_penalty(b.o_real, b.x_real);
    accumulate_scaled(penalty_, p, b.scale);
    return p * (gamma_ / 2 * static_cast<double>(every_));
  }

  void end_d_step(const torch::Tensor&, const torch::Tensor&, DataParallel*) override {
    if (on_) last_ = penalty_;
  }

  std::vector<torch::Tensor> stats() const override { return {last_}; }

  std::vector<std::pair<std::string, torch::Tensor>> state() const override {
    return {{name(), last_.reshape({1})}};
  }
  void restore(const CheckpointData& c) override {
    if (const auto s = c.find_train_state(name())) {
      if (s->numel() != 1 || s->scalar_type() != torch::kFloat)
        fail(c.path, ": train state ", name(), ": expected 1 float, got ", s->numel(), " of ", s->scalar_type());
      last_ = s->reshape({}).to(last_.device());
    }
  }

 private:
  const char* name() const { return fakes_ ? "r2_penalty" : "r1_penalty"; }
  bool fakes_;
  double gamma_;
  int64_t every_;
  bool on_ = false;
  torch::Tensor penalty_;  // this D step's, over its micro-batches
  torch::Tensor last_;     // the latest computed one (the statistic)
};
}  // namespace

std::unique_ptr<StepFeature> make_r1_feature(const Config& cfg, torch::Device device) {
  return std::make_unique<GradientPenaltyFeature>(false, cfg.train.r1_gamma, cfg.train.r1_every, device);
}

std::unique_ptr<StepFeature> make_r2_feature(const Config& cfg, torch::Device device) {
  return std::make_unique<GradientPenaltyFeature>(true, cfg.train.r2_gamma, cfg.train.r2_every, device);
}

}  // namespace hamgan
