#include "gan/train/ada.h"

#include <algorithm>

#include "core/compat.h"
#include "core/error.h"
#include "gan/train/ada_augment.h"
#include "gan/train/distributed.h"

namespace hamgan {

namespace {
class AdaFeature : public StepFeature {
 public:
  AdaFeature(const TrainConfig& t, torch::Device device)
      : policy_(t.ada), target_(t.ada_target), interval_(t.ada_interval), kimg_(t.ada_kimg),
        carry_(t.init_ada_p), relativistic_(t.loss == GanLoss::Relativistic), p_(t.ada_p), sums_(torch::zeros({2}, torch::TensorOptions(device).dtype(torch::kDouble))) {}

  // In fp32 whatever autocast gave, with autocast off inside: the resampling's filters and the
  // colour matrices would otherwise run in bf16.
  torch::Tensor augment(const torch::Tensor& x, at::Generator& rng) override {
    const compat::NoAutocast fp32;
    return ada_augment(x.to(torch::kFloat), policy_, p_, draw_ada(policy_, x.size(0), rng));
  }

  void begin_d_step(int64_t d_step) override { d_step_ = d_step; }

  torch::Tensor d_loss(const DMicroBatch& b) override {
    const torch::Tensor o = (relativistic_ ? b.o_real - b.o_fake : b.o_real).detach();
    sums_ = sums_ + torch::stack({o.sign().sum().to(torch::kDouble), torch::full({}, static_cast<double>(o.numel()), sums_.options())});
    return {};
  }

  void end_d_step(const torch::Tensor&, const torch::Tensor&, DataParallel* dp) override {
    if ((d_step_ + 1) % interval_ != 0) return;
    torch::Tensor s = sums_;
    if (dp && dp->world_size() > 1) dp->all_reduce_sum(s);  // every rank's reals: the same p everywhere
    const auto host = s.cpu();  // host read: once per interval (p steers the next draws on the host)
    const double sign_sum = host[0].item<double>(), count = host[1].item<double>();
    rt_ = sign_sum / count;
    if (target_ > 0) {
      const double step = count / (kimg_ * 1000);
      p_ = std::clamp(p_ + (rt_ > target_ ? step : rt_ < target_ ? -step : 0.0), 0.0, 1.0);
    }
    sums_ = torch::zeros_like(sums_);
  }

  std::vector<torch::Tensor> stats() const override {
    const auto f = torch::TensorOptions(sums_.device()).dtype(torch::kFloat);
    return {torch::full({}, p_, f), torch::full({}, rt_, f)};
  }

  std::vector<std::pair<std::string, torch::Tensor>> state() const override {
    // host read: at a checkpoint only, as the models' own state
    return {{"ada", torch::cat({torch::tensor({p_, rt_}, torch::kDouble), sums_.cpu()})}};
  }
  // A run that turns ADA on at a resume starts from train.ada_p.
  void restore(const CheckpointData& c) override {
    const auto s = c.find_train_state("ada");
    if (!s) return;
    if (s->numel() != 4 || s->scalar_type() != torch::kDouble)
      fail(c.path, ": train state ada: expected 4 doubles (p, r_t and the interval's two sums), got ", s->numel(),
           " of ", s->scalar_type());
    const torch::Tensor h = s->cpu();
    p_ = h[0].item<double>(), rt_ = h[1].item<double>();  // host read: the checkpoint's tensor, at restore only
    sums_ = h.narrow(0, 2, 2).to(sums_.device());
  }
  // train.init_ada_p: a fine-tuning run starts from the source run's p.
  void init_from(const CheckpointData& c, std::ostream& log) override {
    if (!carry_) return;
    const auto s = c.find_train_state("ada");
    if (!s) {
      log << "train.init_ada_p: " << c.path << " has no ADA state (it trained without train.ada); p starts at "
          << p_ << "\n";
      return;
    }
    p_ = s->cpu()[0].item<double>();  // host read: the checkpoint's tensor, once at the start
    log << "train.init_ada_p: p starts at " << p_ << ", from " << c.path << "\n";
  }

 private:
  AdaPolicy policy_;
  double target_;
  int64_t interval_;
  double kimg_;
  bool carry_;
  bool relativistic_;  // r_t over the pairs' differences (ada.h)
  double p_;
  double rt_ = 0;
  int64_t d_step_ = 0;
  torch::Tensor sums_;  // this interval's sum of sign(D(real)) and its count, on the device
};
}  // namespace

std::unique_ptr<StepFeature> make_ada_feature(const Config& cfg, torch::Device device) {
  return std::make_unique<AdaFeature>(cfg.train, device);
}

}  // namespace hamgan
