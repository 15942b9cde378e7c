// NMF ham (Geng et al. 2021, Alg. 2): non-negative X ~ D C by Lee & Seung's multiplicative
// updates, C first then D. X is made non-negative by a ReLU (Sec. 2.2.2); D starts uniform in
// [0, 1) and C as softmax over r of inv_t * D^T X (App. F: one spherical K-means step).
#pragma once
#include <memory>

#include "core/config_reader.h"
#include "layers/context/decomposition.h"

namespace hamgan {

struct NMFOptions {
  double inv_t = 1.0;            // 1/T of the initial softmax; App. F recommends T ~ 1
  bool normalize_bases = false;
};

class NMF : public Decomposition {
 public:
  static constexpr double kEps = 1e-6;  // added to the MU denominators

  explicit NMF(NMFOptions opt) : opt_(opt) {}
  std::string name() const override { return "ham_nmf"; }
  torch::Tensor prepare(const torch::Tensor& x) const override { return torch::relu(x); }
  torch::Tensor random_bases(int64_t batch, int64_t d, int64_t r,
                             const c10::optional<torch::Generator>& gen,
                             const torch::TensorOptions& options) const override;
  torch::Tensor init_coef(const torch::Tensor& x, const torch::Tensor& bases) const override;
  void step(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef) const override;
  // On the CPU without autograd (the K steps of one_step): nmf_updates_cpu, each thread all K
  // steps of its share of the batch. Same updates, same order as step().
  void iterate(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef,
               int64_t steps) const override;
  // On the CPU: ReLU, cast, init, K steps and the differentiable final update per image
  // (layers/context/nmf_cpu.h), never materialising ReLU(x) in fp32 for the whole batch.
  Decomposed solve_one_step(const torch::Tensor& raw, const torch::Tensor& bases0,
                            int64_t steps) const override;
  torch::Tensor final_coef(const torch::Tensor& x, const torch::Tensor& bases,
                           const torch::Tensor& coef) const override;
  const NMFOptions& options() const { return opt_; }

 private:
  NMFOptions opt_;
};

// Reads inv_t and normalize_bases.
std::shared_ptr<const Decomposition> parse_nmf(ConfigNode& node);

}  // namespace hamgan
