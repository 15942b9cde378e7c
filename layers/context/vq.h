// Soft VQ ham (Geng et al. 2021, Alg. 1): K-means with softmax over cosine similarities,
//   C <- softmax_r(cosine(D, X) / T),  D <- X C^T diag(C 1_n)^{-1},
// ending with one more C update. D starts as unit-norm Gaussian columns (X may be negative).
#pragma once
#include <memory>

#include "core/config_reader.h"
#include "layers/context/decomposition.h"

namespace hamgan {

struct VQOptions {
  double temperature = 0.1;  // T; App. F recommends a low one for VQ and CD
};

class VQ : public Decomposition {
 public:
  static constexpr double kEps = 1e-6;  // added to the cluster sizes C 1_n

  explicit VQ(VQOptions opt) : opt_(opt) {}
  std::string name() const override { return "ham_vq"; }
  torch::Tensor random_bases(int64_t batch, int64_t d, int64_t r,
                             const c10::optional<torch::Generator>& gen,
                             const torch::TensorOptions& options) const override;
  void step(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef) const override;
  torch::Tensor final_coef(const torch::Tensor& x, const torch::Tensor& bases,
                           const torch::Tensor& coef) const override;

 private:
  VQOptions opt_;
};

// Reads temperature.
std::shared_ptr<const Decomposition> parse_vq(ConfigNode& node);

// softmax over r of cosine(D, X) / T: the soft assignment of Alg. 1 and Alg. 3.
torch::Tensor soft_assign(const torch::Tensor& x, const torch::Tensor& bases, double temperature);
// Unit-norm Gaussian columns: the random D of VQ and CD.
torch::Tensor random_unit_bases(int64_t batch, int64_t d, int64_t r,
                                const c10::optional<torch::Generator>& gen,
                                const torch::TensorOptions& options);

}  // namespace hamgan
