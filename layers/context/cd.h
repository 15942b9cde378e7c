// Soft concept decomposition ham (Geng et al. 2021, App. B, Alg. 3 / Eq. 14): spherical
// K-means for D,
//   C <- softmax_r(cosine(D, X) / T),  D <- normalize(X C^T),
// then the ridge solution C = (D^T D + beta I)^{-1} D^T X. D starts as unit-norm Gaussian columns.
#pragma once
#include <memory>

#include "core/config_reader.h"
#include "layers/context/decomposition.h"

namespace hamgan {

struct CDOptions {
  double temperature = 0.1;  // T (Table 9: 0.1 and 0.01 are best)
  double beta = 0.1;         // ridge weight of Eq. 14 ("0.01 or 0.1 makes no difference")
};

class CD : public Decomposition {
 public:
  explicit CD(CDOptions opt) : opt_(opt) {}
  std::string name() const override { return "ham_cd"; }
  torch::Tensor random_bases(int64_t batch, int64_t d, int64_t r,
                             const c10::optional<torch::Generator>& gen,
                             const torch::TensorOptions& options) const override;
  void step(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef) const override;
  torch::Tensor final_coef(const torch::Tensor& x, const torch::Tensor& bases,
                           const torch::Tensor& coef) const override;

 private:
  CDOptions opt_;
};

// Reads temperature and beta.
std::shared_ptr<const Decomposition> parse_cd(ConfigNode& node);

}  // namespace hamgan
