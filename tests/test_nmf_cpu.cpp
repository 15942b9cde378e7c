// The NMF ham's per-image CPU kernels (layers/context/nmf_cpu.h) against the plain batched
// ops they replace: NMF::init_coef + NMF::step (Alg. 2) and NMF::final_coef under autograd,
// in double to rounding, with channels-last strides and bf16 input; the hand-written backward
// in a double-precision gradient check. The module-level oracle (the Python reference of
// Alg. 2) runs through these kernels in test_hamburger.
#include <gtest/gtest.h>

#include "core/error.h"
#include "layers/context/nmf.h"
#include "layers/context/nmf_cpu.h"
#include "support/gradcheck.h"
#include "support/oracle.h"

namespace test_nmf_cpu {

using namespace hamgan;
using namespace hamgan::test;

namespace {

const NMF kNmf(NMFOptions{});

// N x d x n with x_b stored as X_b^T (the lower bread's channels-last output), or plain.
torch::Tensor input(int64_t batch, int64_t d, int64_t n, bool transposed, torch::Dtype dtype) {
  return transposed ? torch::randn({batch, n, d}, dtype).transpose(1, 2) : torch::randn({batch, d, n}, dtype);
}

// The generic path: ReLU, init, K steps (no autograd), then final_coef with autograd.
void reference(const torch::Tensor& x, const torch::Tensor& b0, int64_t steps, torch::Tensor& bases,
               torch::Tensor& coef, torch::Tensor& final_c) {
  const torch::Tensor xr = torch::relu(x);
  bases = b0;
  {
    torch::NoGradGuard ng;
    coef = kNmf.init_coef(xr, bases);
    for (int64_t k = 0; k < steps; ++k) kNmf.step(xr, bases, coef);
  }
  final_c = kNmf.final_coef(xr, bases, coef);
}

}  // namespace

TEST(NmfCpu, UpdatesEqualTheStepLoop) {
  torch::manual_seed(1);
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "channels-last strides" : "contiguous");
    const torch::Tensor x = input(5, 16, 40, transposed, torch::kDouble);
    const torch::Tensor b0 = kNmf.random_bases(5, 16, 4, c10::nullopt, torch::kDouble);
    torch::Tensor bases_ref, coef_ref, unused;
    reference(x, b0, 6, bases_ref, coef_ref, unused);
    torch::Tensor bases = b0, coef;
    const torch::Tensor x_copy = x.clone(), b0_copy = b0.clone();
    nmf_updates_cpu(x, bases, coef, 6, /*relu=*/true, 1.0, NMF::kEps);
    EXPECT_TRUE(close(bases, bases_ref, 1e-11, 1e-13));
    EXPECT_TRUE(close(coef, coef_ref, 1e-11, 1e-13));
    EXPECT_TRUE(torch::equal(x, x_copy) && torch::equal(b0, b0_copy));  // inputs untouched
  }
}

// Forward and x-gradient of the final update against final_coef under autograd.
TEST(NmfCpu, FinalUpdateAndBackwardEqualAutograd) {
  torch::manual_seed(2);
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "channels-last strides" : "contiguous");
    const torch::Tensor x0 = input(3, 12, 30, transposed, torch::kDouble);
    const torch::Tensor b0 = kNmf.random_bases(3, 12, 3, c10::nullopt, torch::kDouble);
    const torch::Tensor g = torch::randn({3, 3, 30}, torch::kDouble);
    torch::Tensor bases, coef, ref;
    torch::Tensor x_ref = x0.clone().requires_grad_(true);
    reference(x_ref, b0, 4, bases, coef, ref);
    (ref * g).sum().backward();
    torch::Tensor x = x0.clone().requires_grad_(true);
    const torch::Tensor out = nmf_final_update_cpu(x, bases, coef, NMF::kEps);
    (out * g).sum().backward();
    EXPECT_TRUE(close(out, ref, 1e-12, 1e-14));
    EXPECT_TRUE(close(x.grad(), x_ref.grad(), 1e-12, 1e-14));
    EXPECT_EQ(x.grad().strides(), x.strides());  // the gradient keeps x's layout
    EXPECT_FALSE(bases.requires_grad() || coef.requires_grad());
  }
}

// bf16 input (the bread under autocast) is converted and computed in fp32: the results equal
// the fp32 path on the same values to fp32 rounding (a bf16 computation would be off by ~1e-2),
// and the gradient comes back in bf16, one bf16 rounding (2^-8 relative) from fp32's.
TEST(NmfCpu, Bf16InputComputesInFp32) {
  torch::manual_seed(3);
  const torch::Tensor xb = input(4, 32, 64, true, torch::kFloat).to(torch::kBFloat16);
  const torch::Tensor xf = xb.to(torch::kFloat);
  const torch::Tensor b0 = kNmf.random_bases(4, 32, 4, c10::nullopt, torch::kFloat);
  const torch::Tensor g = torch::randn({4, 4, 64});
  torch::Tensor bases_ref, coef_ref, ref;
  torch::Tensor x_ref = xf.clone().requires_grad_(true);
  reference(x_ref, b0, 6, bases_ref, coef_ref, ref);
  (ref * g).sum().backward();
  torch::Tensor bases = b0, coef;
  nmf_updates_cpu(xb, bases, coef, 6, true, 1.0, NMF::kEps);
  EXPECT_EQ(bases.scalar_type(), torch::kFloat);
  EXPECT_TRUE(close(bases, bases_ref, 1e-4, 1e-6));
  EXPECT_TRUE(close(coef, coef_ref, 1e-4, 1e-6));
  torch::Tensor x = xb.clone().requires_grad_(true);
  const torch::Tensor out = nmf_final_update_cpu(x, bases, coef, NMF::kEps);
  (out * g).sum().backward();
  EXPECT_EQ(out.scalar_type(), torch::kFloat);
  EXPECT_TRUE(close(out, ref, 1e-4, 1e-6));
  ASSERT_EQ(x.grad().scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(close(x.grad().to(torch::kFloat), x_ref.grad(), 1.0 / 128, 1e-4));
}

// The hand-written backward is the derivative of the final update with D and C held constant
// (one_step, Eq. 13). x is kept 0.05 away from ReLU's kink so central differences see it smooth.
TEST(NmfCpu, GradcheckFinalUpdateDouble) {
  torch::manual_seed(4);
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "channels-last strides" : "contiguous");
    torch::Tensor leaf = torch::randn(transposed ? at::IntArrayRef{2, 9, 6} : at::IntArrayRef{2, 6, 9},
                                      torch::kDouble);
    leaf = (leaf + leaf.sign() * 0.05).detach().requires_grad_(true);
    const auto x = [&] { return transposed ? leaf.transpose(1, 2) : leaf; };
    torch::Tensor bases = kNmf.random_bases(2, 6, 3, c10::nullopt, torch::kDouble), coef;
    nmf_updates_cpu(x().detach(), bases, coef, 3, true, 1.0, NMF::kEps);
    EXPECT_TRUE(gradcheck([&] { return nmf_final_update_cpu(x(), bases, coef, NMF::kEps); }, {leaf}));
  }
}

// NMF::solve_one_step (fused) against the generic Decomposition::solve_one_step.
TEST(NmfCpu, SolveOneStepEqualsTheGenericPath) {
  torch::manual_seed(5);
  const torch::Tensor x0 = input(6, 16, 25, true, torch::kDouble);
  const torch::Tensor b0 = kNmf.random_bases(6, 16, 2, c10::nullopt, torch::kDouble);
  const torch::Tensor g = torch::randn({6, 2, 25}, torch::kDouble);
  torch::Tensor xa = x0.clone().requires_grad_(true), xb = x0.clone().requires_grad_(true);
  const Decomposed a = kNmf.solve_one_step(xa, b0, 5);
  const Decomposed b = kNmf.Decomposition::solve_one_step(xb, b0, 5);
  (a.coef * g).sum().backward();
  (b.coef * g).sum().backward();
  EXPECT_TRUE(close(a.bases, b.bases, 1e-11, 1e-13));
  EXPECT_TRUE(close(a.coef, b.coef, 1e-11, 1e-13));
  EXPECT_TRUE(close(xa.grad(), xb.grad(), 1e-11, 1e-13));
}

// A gradient penalty through the final update (R1 of a D with the NMF Hamburger) differentiates
// its backward again, as autograd does final_coef's: L = sum(tanh(out) * v), v a parameter after
// the module, P = ||dL/dx||^2; dP/dv and dP/dx equal the batched ops' to rounding.
TEST(NmfCpu, FinalUpdateBackwardDifferentiatesAgain) {
  torch::manual_seed(6);
  const torch::Tensor x0 = input(3, 12, 30, true, torch::kDouble);
  const torch::Tensor b0 = kNmf.random_bases(3, 12, 3, c10::nullopt, torch::kDouble);
  const torch::Tensor v0 = torch::randn({3, 3, 30}, torch::kDouble);
  torch::Tensor bases, coef, unused;
  reference(x0, b0, 4, bases, coef, unused);
  const auto penalty_grads = [&](bool fused) {
    const torch::Tensor x = x0.clone().requires_grad_(true), v = v0.clone().requires_grad_(true);
    const torch::Tensor out =
        fused ? nmf_final_update_cpu(x, bases, coef, NMF::kEps) : kNmf.final_coef(torch::relu(x), bases, coef);
    const torch::Tensor gx = torch::autograd::grad({(torch::tanh(out) * v).sum()}, {x}, {}, true, true)[0];
    return torch::autograd::grad({gx.square().sum()}, {v, x});
  };
  const auto fused = penalty_grads(true), batched = penalty_grads(false);
  EXPECT_TRUE(close(fused[0], batched[0], 1e-11, 1e-13));
  EXPECT_TRUE(close(fused[1], batched[1], 1e-11, 1e-13));
  EXPECT_GT(fused[0].abs().max().item<double>(), 0.0);
}

TEST(NmfCpu, BadShapesAreNamed) {
  const torch::Tensor x = torch::rand({2, 8, 10});
  torch::Tensor bases = torch::rand({2, 7, 2}), coef;
  try {
    nmf_updates_cpu(x, bases, coef, 1, true, 1.0, NMF::kEps);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nmf_updates_cpu: expected CPU tensors X (N x d x n)"),
              std::string::npos) << e.what();
  }
  EXPECT_THROW(nmf_final_update_cpu(x, torch::rand({2, 8, 2}), torch::rand({2, 3, 10}), NMF::kEps), Error);
}

}  // namespace test_nmf_cpu
