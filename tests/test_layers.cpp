// Conditional BN, G/D blocks and SAGAN self-attention against the Python reference
// (oracle/layers.py, built on torch.nn.utils.spectral_norm), and gradient checks.
#include <gtest/gtest.h>

#include "layers/cond_bn.h"
#include "layers/context/self_attention.h"
#include "layers/dblock.h"
#include "layers/gblock.h"
#include "support/gradcheck.h"
#include "support/module_check.h"
#include "support/oracle.h"

using namespace hamgan;
using namespace hamgan::test;

namespace {

constexpr double kRtol = 1e-4, kAtol = 1e-5;  // fp32; BN and softmax reduce in other orders
const SNOptions kSN{1e-6, 1};

template <typename M, typename Fwd>
void check(M m, const std::string& file, Fwd fwd, int n_inputs) {
  std::vector<std::string> keys;
  for (int i = 0; i < n_inputs; ++i) keys.push_back("in" + std::to_string(i));
  expect_matches_oracle(*m, file, [&](const std::vector<torch::Tensor>& in) { return fwd(m, in); },
                        keys, kRtol, kAtol);
}

}  // namespace

TEST(CondBatchNorm, LabelsMatchReference) {
  check(CondBatchNorm2d(6, CondSpec{CondKind::labels, 4}, 1e-5, kSN), "cbn_labels.pt",
        [](auto& m, auto& in) { return m->forward(in[0], in[1]); }, 2);
}

TEST(CondBatchNorm, SharedVectorMatchesReference) {
  check(CondBatchNorm2d(6, CondSpec{CondKind::vector, 7}, 1e-5, kSN), "cbn_vector.pt",
        [](auto& m, auto& in) { return m->forward(in[0], in[1]); }, 2);
}

TEST(Blocks, GBlockMatchesReference) {
  check(GBlock(6, 4, true, CondSpec{CondKind::labels, 5}, 1e-5, kSN), "gblock.pt",
        [](auto& m, auto& in) { return m->forward(in[0], in[1]); }, 2);
}

TEST(Blocks, OptimizedFirstDBlockMatchesReference) {
  check(DBlock(3, 8, false, true, kSN), "dblock_optimized.pt",
        [](auto& m, auto& in) { return m->forward(in[0]); }, 1);
}

TEST(Blocks, DBlockMatchesReference) {
  check(DBlock(8, 12, true, true, kSN), "dblock.pt", [](auto& m, auto& in) { return m->forward(in[0]); }, 1);
}

TEST(Blocks, NonDownsamplingDBlockMatchesReference) {
  check(DBlock(8, 8, true, false, kSN), "dblock_keep.pt", [](auto& m, auto& in) { return m->forward(in[0]); }, 1);
}

TEST(SelfAttention, MatchesReferenceWithNonSquareInput) {
  check(std::make_shared<SelfAttentionImpl>(16, SelfAttentionOptions{}, kSN), "attention.pt",
        [](auto& m, auto& in) { return m->forward(in[0], {}); }, 1);
}

TEST(SelfAttention, GradcheckDouble) {
  torch::manual_seed(7);
  auto m = std::make_shared<SelfAttentionImpl>(16, SelfAttentionOptions{}, SNOptions{1e-12, 1});
  m->to(torch::kDouble);
  m->eval();
  {
    torch::NoGradGuard ng;
    m->gamma.fill_(0.7);
  }
  torch::Tensor x = torch::randn({2, 16, 4, 6}, torch::kDouble).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return m->forward(x, {}); },
                        {x, m->gamma, m->theta->weight_orig, m->phi->weight_orig,
                         m->g->weight_orig, m->o->weight_orig}));
}

TEST(SelfAttention, StartsAsIdentity) {
  auto m = std::make_shared<SelfAttentionImpl>(16, SelfAttentionOptions{}, kSN);
  const torch::Tensor x = torch::randn({2, 16, 4, 4});
  EXPECT_TRUE(torch::equal(m->forward(x, {}), x));
}

TEST(Blocks, GradcheckDoubleGBlockEval) {
  torch::manual_seed(8);
  GBlock m(3, 2, true, CondSpec{CondKind::vector, 4}, 1e-5, SNOptions{1e-12, 1});
  m->to(torch::kDouble);
  m->eval();
  torch::Tensor x = torch::randn({2, 3, 3, 2}, torch::kDouble).requires_grad_(true);
  torch::Tensor c = torch::randn({2, 4}, torch::kDouble).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return m->forward(x, c); }, {x, c}));
}
