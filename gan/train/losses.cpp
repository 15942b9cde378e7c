#include "gan/train/losses.h"

#include "core/error.h"

namespace hamgan {

namespace {

void check_pairs(const torch::Tensor& d_real, const torch::Tensor& d_fake) {
  if (!d_real.defined()) fail("train.loss rpgan: G's loss needs D's logits of real images");
  if (!d_real.sizes().equals(d_fake.sizes()))
    fail("train.loss rpgan: pairs real and fake logits one to one, got ", d_real.sizes(), " real and ",
         d_fake.sizes(), " fake");
}

}  // namespace

DLoss d_loss(GanLoss type, const torch::Tensor& d_real, const torch::Tensor& d_fake) {
  switch (type) {
    case GanLoss::Hinge: return {torch::relu(1.0 - d_real).mean(), torch::relu(1.0 + d_fake).mean()};
    case GanLoss::NonSaturating: return {torch::softplus(-d_real).mean(), torch::softplus(d_fake).mean()};
    case GanLoss::Relativistic:
      check_pairs(d_real, d_fake);
      return {torch::softplus(d_fake - d_real).mean(), torch::zeros({}, d_fake.options())};
  }
  fail("train.loss: unknown loss");
}

torch::Tensor g_loss(GanLoss type, const torch::Tensor& d_fake, const torch::Tensor& d_real) {
  switch (type) {
    case GanLoss::Hinge: return -d_fake.mean();
    case GanLoss::NonSaturating: return torch::softplus(-d_fake).mean();
    case GanLoss::Relativistic: check_pairs(d_real, d_fake); return torch::softplus(d_real - d_fake).mean();
  }
  fail("train.loss: unknown loss");
}

}  // namespace hamgan
