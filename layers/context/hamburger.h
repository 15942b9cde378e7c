// Hamburger (Geng et al. 2021, Sec. 2.2.1, Eq. 5-6) with the bread of the official GAN code:
//   y = x + sigma * N(W_u(M(W_l(x)))),
// W_l: 1x1 SN conv C -> S*d, W_u: 1x1 SN conv S*d -> C (no biases), N class-conditional BN in G
// (none in D), sigma a learnable scalar starting at 0, M a matrix decomposition (the ham) run
// independently on each of the S groups of d channels, n = H*W.
//
// The initial dictionary D (Table 8):
//   random  drawn per forward (default). With seed >= 0 the module draws it on the CPU from its
//           own generator seeded with `seed` (call reseed() to restart it), so sampling from a
//           checkpoint is reproducible on any device; with seed -1 it uses torch's default
//           generator of x's device (torch::manual_seed makes that reproducible per device).
//   fixed   a buffer `bases` (S x d x r) drawn once at construction (saved in checkpoints).
//   online  the same buffer as a warm start, moved in training towards the batch mean of the
//           solved D by `momentum` and renormalised along d (the official code's online update).
// set_next_bases() hands the next forward its D explicitly (tests, reproducible comparisons).
// M runs in fp32 (or double) outside autocast: the MU rule's eps 1e-6 does not survive fp16.
#pragma once
#include <memory>

#include "layers/context/context.h"
#include "layers/context/decomposition.h"

namespace hamgan {

enum class HamInit { random, fixed, online };

// The keys' ranges and meanings are their rows beside parse_hamburger_options (hamburger.cpp);
// the paper's symbols: groups S, d and r of Sec. 3.1 (d = 8r), steps K.
struct HamburgerOptions : ContextOptions {
  std::shared_ptr<const Decomposition> ham;
  int64_t groups = 1;
  int64_t d = 0;
  int64_t r = 0;
  int64_t steps = 6;
  int64_t eval_steps = 0;
  HamGrad grad = HamGrad::one_step;
  HamInit init = HamInit::random;
  double momentum = 0.9;
  int64_t seed = -1;
};

class HamburgerImpl : public ContextModuleImpl {
 public:
  explicit HamburgerImpl(const ContextSpec& spec);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond = {}) override;

  // D for the next forward only: (B * S) x d x r, row b * S + s for image b, group s.
  void set_next_bases(torch::Tensor bases);
  void reseed(uint64_t seed);
  int64_t d() const { return d_; }
  int64_t r() const { return r_; }
  int64_t groups() const { return opt_.groups; }
  // Whether each forward draws a fresh D (init random): a sampler hands it per-image D instead.
  bool draws_bases() const { return opt_.init == HamInit::random; }
  const Decomposition& ham() const { return *opt_.ham; }

  SNConv2d lower{nullptr}, upper{nullptr};
  CondBatchNorm2d norm{nullptr};  // G only
  torch::Tensor sigma;
  torch::Tensor bases;  // fixed and online init only

 private:
  torch::Tensor initial_bases(int64_t batch, const torch::TensorOptions& options);

  HamburgerOptions opt_;
  int64_t d_ = 0, r_ = 0;
  c10::optional<torch::Generator> gen_;
  torch::Tensor next_bases_;
};

// The keys shared by every ham plus the decomposition's own (read by parse_ham).
std::shared_ptr<const ContextOptions> parse_hamburger_options(
    ConfigNode& node, std::shared_ptr<const Decomposition> (*parse_ham)(ConfigNode&));
ContextModule make_hamburger(const ContextSpec& spec);

}  // namespace hamgan
