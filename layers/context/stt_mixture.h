// Mixture Tensor Synthesizer (STT paper Sec. 3.3, Eq. 22-23), the paper's instance:
//   Y = Softmax(theta_1 R + theta_2 Z) V,
// R the Kronecker-factorized random matrix of Eq. 21 (stt_random_factorized) and Z the
// tensor dense logits of Eq. 14-17 (stt_dense). theta = softmax(theta_logits) so that
// theta_1 + theta_2 = 1 and both stay positive while learned.
#pragma once
#include "layers/context/stt_random_factorized.h"

namespace hamgan {

struct SttMixtureOptions : SttRandomFactorizedOptions {
  double theta_init = 0.5;  // theta_1 at init; theta_2 = 1 - theta_1
};

class SttMixtureImpl : public SttAttentionImpl {
 public:
  SttMixtureImpl(const ContextSpec& spec, const SttMixtureOptions& opt);
  torch::Tensor theta();  // (theta_1, theta_2)

  SttDenseWeights a;
  std::vector<torch::Tensor> factors;  // r_0 .. r_{N-1}
  torch::Tensor theta_logits;          // 2

 protected:
  torch::Tensor logits(const torch::Tensor& query) override;
};

std::shared_ptr<const ContextOptions> parse_stt_mixture_options(ConfigNode& node);
ContextModule make_stt_mixture(const ContextSpec& spec);

}  // namespace hamgan
