// The "ham" of Hamburger (Geng et al. 2021, Sec. 2.2.2): a matrix decomposition X ~ D C solved
// by K iterations of an optimization algorithm, whose output D C is the module's global context.
// Layout: X is (batch x d x n), D (batch x d x r), C (batch x r x n); batch = B * groups.
#pragma once
#include <torch/torch.h>

#include <string>

#include "core/config_keys.h"

namespace hamgan {

// How gradients pass through the K iterations (Sec. 2.3, Table 1).
enum class HamGrad {
  one_step,  // K steps without autograd, then one differentiable update of C with D fixed (Eq. 13)
  bptt,      // autograd through every step
};

struct Decomposed {
  torch::Tensor output;  // D C (batch x d x n); undefined from solve()
  torch::Tensor bases;   // D after the K steps
  torch::Tensor coef;    // the final C
};

class Decomposition {
 public:
  virtual ~Decomposition() = default;
  virtual std::string name() const = 0;
  // Applied to the lower bread's output before M (NMF: ReLU for non-negativity, Sec. 2.2.2).
  virtual torch::Tensor prepare(const torch::Tensor& x) const { return x; }
  // A random initial dictionary (batch x d x r) drawn with `gen` (or torch's default one).
  virtual torch::Tensor random_bases(int64_t batch, int64_t d, int64_t r,
                                     const c10::optional<torch::Generator>& gen,
                                     const torch::TensorOptions& options) const = 0;
  // Initial codes from X and D; undefined where the first step computes C from D alone.
  virtual torch::Tensor init_coef(const torch::Tensor& x, const torch::Tensor& bases) const {
    (void)x, (void)bases;
    return {};
  }
  // One iteration of the algorithm, updating D and C.
  virtual void step(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef) const = 0;
  // `steps` iterations (a loop of step(); a ham may fuse them where autograd is off).
  virtual void iterate(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef,
                       int64_t steps) const {
    for (int64_t k = 0; k < steps; ++k) step(x, bases, coef);
  }
  // The update of C with D fixed that ends the algorithm (the differentiable one in one_step).
  virtual torch::Tensor final_coef(const torch::Tensor& x, const torch::Tensor& bases,
                                   const torch::Tensor& coef) const = 0;
  // solve(prepare(raw) in bases0's dtype, bases0, steps, one_step) from the lower bread's raw
  // output (any float dtype and strides); a ham may fuse the whole of it (NMF on the CPU).
  virtual Decomposed solve_one_step(const torch::Tensor& raw, const torch::Tensor& bases0,
                                    int64_t steps) const;
};

// K steps from bases0, then final_coef; gradients as `grad` says. No output: callers that
// multiply D C by a matrix next do it in the cheaper order (hamburger.cpp).
Decomposed solve(const Decomposition& ham, const torch::Tensor& x, const torch::Tensor& bases0,
                 int64_t steps, HamGrad grad);
// solve() with the output D C.
Decomposed decompose(const Decomposition& ham, const torch::Tensor& x, const torch::Tensor& bases0,
                     int64_t steps, HamGrad grad);

// The `temperature` key of the hams with a soft assignment (VQ, CD).
template <class S>
Key<S> temperature_key(double S::*m) {
  return keys::real("temperature", m, closed(1e-6, 1e6), "T of the soft assignment (cosine similarity / T, softmax)");
}

// Column-wise cosine similarity D^T X / (|d_i| |x_j|) (batch x r x n), norms clamped at 1e-6.
torch::Tensor column_cosine(const torch::Tensor& bases, const torch::Tensor& x);
// Columns scaled to unit L2 norm along d (dim 1), norms clamped at 1e-6.
torch::Tensor normalize_columns(const torch::Tensor& t);

}  // namespace hamgan
