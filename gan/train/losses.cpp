#include "gan/train/losses.h"

#include "core/error.h"

namespace hamgan {

DLoss d_loss(GanLoss type, const torch::Tensor& d_real, const torch::Tensor& d_fake) {
  if (type == GanLoss::Hinge)
    return {torch::relu(1.0 - d_real).mean(), torch::relu(1.0 + d_fake).mean()};
  return {torch::softplus(-d_real).mean(), torch::softplus(d_fake).mean()};
}

torch::Tensor g_loss(GanLoss type, const torch::Tensor& d_fake) {
  if (type == GanLoss::Hinge) return -d_fake.mean();
  return torch::softplus(-d_fake).mean();
}

}  // namespace hamgan
