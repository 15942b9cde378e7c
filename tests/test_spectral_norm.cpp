// Spectral norm against torch.nn.utils.spectral_norm (oracle/spectral_norm.py), plus a
// double-precision gradient check of sigma's path.
#include <gtest/gtest.h>

#include "layers/spectral_norm.h"
#include "support/gradcheck.h"
#include "support/oracle.h"

namespace test_spectral_norm {

using namespace hamgan;
using namespace hamgan::test;

namespace {

constexpr double kRtol = 1e-5, kAtol = 1e-6;  // fp32, same ops as PyTorch

template <typename M>
void check_against_torch(M m, const std::string& file) {
  const TensorMap d = load_tensors(oracle_path(file));
  load_state_dict(*m, with_prefix(d, "init"), file);
  m->train();
  for (int s = 0; s < 3; ++s) {
    const std::string p = "step" + std::to_string(s) + ".";
    EXPECT_TRUE(close(m->forward(get(d, p + "x")), get(d, p + "y"), kRtol, kAtol)) << file << " " << p;
    EXPECT_TRUE(close(m->weight_u, get(d, p + "u"), kRtol, kAtol)) << file << " " << p << "u";
    EXPECT_TRUE(close(m->weight_v, get(d, p + "v"), kRtol, kAtol)) << file << " " << p << "v";
  }
  torch::Tensor x1 = get(d, "twice.x1").clone();
  if (x1.is_floating_point()) x1.requires_grad_(true);
  m->zero_grad();
  const torch::Tensor real = m->forward(x1);  // sequenced: each forward moves u, v
  const torch::Tensor fake = m->forward(get(d, "twice.x2"));
  const torch::Tensor loss = (real * 1.5).sum() + fake.pow(2).sum();
  loss.backward();  // two forwards, one backward: must not trip autograd's version check
  EXPECT_TRUE(close(loss, get(d, "twice.loss"), kRtol, kAtol)) << file;
  EXPECT_TRUE(close(m->weight_orig.grad(), get(d, "twice.grad_weight_orig"), 1e-4, 1e-5)) << file;
  if (x1.is_floating_point()) {
    EXPECT_TRUE(close(x1.grad(), get(d, "twice.grad_x1"), 1e-4, 1e-5)) << file;
  }
  EXPECT_TRUE(close(m->weight_u, get(d, "twice.u"), kRtol, kAtol)) << file;
  // Eval mode leaves u and v bit for bit as they were; against torch they agree to rounding
  // (the train steps' power iterations round differently in other LibTorch versions).
  const torch::Tensor u = m->weight_u.clone(), v = m->weight_v.clone();
  m->eval();
  EXPECT_TRUE(close(m->forward(get(d, "eval.x")), get(d, "eval.y"), kRtol, kAtol)) << file;
  EXPECT_TRUE(close(m->weight_u, u, 0, 0)) << file << ": eval mode changed u";
  EXPECT_TRUE(close(m->weight_v, v, 0, 0)) << file << ": eval mode changed v";
  EXPECT_TRUE(close(m->weight_u, get(d, "eval.u"), kRtol, kAtol)) << file;
  EXPECT_TRUE(close(m->weight_v, get(d, "eval.v"), kRtol, kAtol)) << file;
}

}  // namespace

TEST(SpectralNorm, Conv3x3MatchesTorch) { check_against_torch(SNConv2d(5, 7, 3, 1, true, SNOptions{1e-6, 1}), "conv.pt"); }
TEST(SpectralNorm, Conv1x1NoBiasMatchesTorch) { check_against_torch(SNConv2d(6, 3, 1, 0, false, SNOptions{1e-12, 1}), "conv1x1.pt"); }
TEST(SpectralNorm, LinearMatchesTorch) { check_against_torch(SNLinear(9, 4, true, SNOptions{1e-6, 1}), "linear.pt"); }
TEST(SpectralNorm, EmbeddingMatchesTorch) { check_against_torch(SNEmbedding(10, 6, SNOptions{1e-6, 1}), "embedding.pt"); }

TEST(SpectralNorm, NormalizedWeightHasUnitSigmaAfterManyIterations) {
  torch::manual_seed(3);
  SNLinear m(12, 8, false, SNOptions{1e-12, 50});
  m->train();
  const torch::Tensor w = m->weight();
  const double top = std::get<1>(torch::linalg_svd(w.detach(), false, {}))[0].item<double>();
  EXPECT_NEAR(top, 1.0, 1e-4);
}

TEST(SpectralNorm, GradcheckDoubleConv) {
  torch::manual_seed(4);
  SNConv2d m(3, 4, 3, 1, true, SNOptions{1e-12, 1});
  m->to(torch::kDouble);
  m->train();
  m->forward(torch::randn({1, 3, 4, 4}, torch::kDouble));  // move u, v off their init
  m->eval();  // fixed u, v: a deterministic function of W and x
  torch::Tensor x = torch::randn({2, 3, 5, 4}, torch::kDouble).requires_grad_(true);
  EXPECT_TRUE(gradcheck([&] { return m->forward(x); }, {x, m->weight_orig, m->bias}));
}

TEST(SpectralNorm, GradcheckDoubleEmbeddingAndLinear) {
  torch::manual_seed(5);
  SNEmbedding e(6, 5, SNOptions{1e-12, 1});
  SNLinear l(5, 3, true, SNOptions{1e-12, 1});
  e->to(torch::kDouble);
  l->to(torch::kDouble);
  e->eval();
  l->eval();
  const torch::Tensor y = torch::tensor({0, 3, 5, 3}, torch::kLong);
  EXPECT_TRUE(gradcheck([&] { return l->forward(e->forward(y)); },
                        {e->weight_orig, l->weight_orig, l->bias}));
}

// Autocast itself is CUDA-only in the trainer and untestable here; this pins that the
// power iteration writes fp32 buffers and returns an fp32 weight from fp32 inputs.
TEST(SpectralNorm, PowerIterationKeepsFloat32) {
  torch::manual_seed(6);
  torch::Tensor w = torch::randn({4, 6});
  torch::Tensor u = torch::nn::functional::normalize(torch::randn({4}), torch::nn::functional::NormalizeFuncOptions().dim(0));
  torch::Tensor v = torch::nn::functional::normalize(torch::randn({6}), torch::nn::functional::NormalizeFuncOptions().dim(0));
  const torch::Tensor out = spectral_normalized(w, u, v, true, 1e-12, 1);
  EXPECT_EQ(out.scalar_type(), torch::kFloat);
  EXPECT_EQ(u.scalar_type(), torch::kFloat);
}

}  // namespace test_spectral_norm
