// LeCam regularisation (Tseng et al. 2021, "Regularizing Generative Adversarial Networks under
// Limited Data", Eq. 3): D's outputs are pulled towards anchors, exponential moving averages of
// D's mean output on real (a_R) and on fake (a_F) images,
//   R_LC = E_x[ relu(D(x) - a_F)^2 ] + E_z[ relu(a_R - D(G(z)))^2 ],   L_D += lambda R_LC,
// in the one-sided (relu) form of the authors' code. Bounds the Le Cam divergence D optimises
// and keeps D's outputs from drifting apart as D overfits.
// Two deliberate differences from the authors' code, both for one result whatever the ranks and
// micro-batches: the anchors are those *before* this D step (theirs include the current batch;
// at decay 0.99 the lag is one step of a hundred), and they are updated with the global batch's
// means; zero-debiased as the authors' TF version (so no start value matters).
#pragma once
#include <torch/torch.h>

#include "gan/train/step_feature.h"

namespace hamgan {

// R_LC for raw D outputs on real and fake (fp32) given the anchors a_R, a_F (0-dim tensors).
torch::Tensor lecam_loss(const torch::Tensor& d_real, const torch::Tensor& d_fake, const torch::Tensor& anchor_real,
                         const torch::Tensor& anchor_fake);

class LeCamAnchors {
 public:
  LeCamAnchors(double decay, torch::Device device);
  bool ready() const { return steps_ > 0; }  // before the first update there is nothing to anchor to
  // a_R, a_F: the debiased averages (0-dim, on the device).
  torch::Tensor real() const;
  torch::Tensor fake() const;
  // After a D step: the step's mean D(x) and mean D(G(z)) (0-dim tensors; never read on the host).
  void update(const torch::Tensor& mean_real, const torch::Tensor& mean_fake);
  // Checkpointed state: [sum_real, sum_fake] and the number of updates.
  torch::Tensor state() const;
  void set_state(const torch::Tensor& state);

 private:
  double decay_;
  torch::Tensor ema_;  // [2]: the raw (biased) averages, real then fake
  int64_t steps_ = 0;
  double debias() const;
};

// The step feature (gan/train/step_feature.h; train.lecam_weight > 0): lambda R_LC in every
// micro-batch's D loss once the anchors exist, the anchors updated after each D step with the
// global batch's means (equal on every rank), checkpointed as "lecam_anchors". Its statistic
// d_lecam is R_LC (before lambda) of the iteration's last D step, 0 before the anchors exist.
std::unique_ptr<StepFeature> make_lecam_feature(const Config& cfg, torch::Device device);

}  // namespace hamgan
