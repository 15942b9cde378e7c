// Synchronised batch norm (layers/sync_batch_norm): with one rank (identity reducer) it is
// torch's BatchNorm2d in training mode (outputs, running stats, gradients) and passes a
// double gradcheck; with 2 Gloo processes on loopback, each holding half of a batch, it is
// one BatchNorm2d over the whole batch. The binary re-launches itself as the two ranks
// (HAMGAN_SYNC_BN_WORKER set), so this file has its own main().
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "gan/config/config.h"
#include "gan/models/generator.h"
#include "gan/train/distributed.h"
#include "layers/cond_bn.h"
#include "layers/sync_batch_norm.h"
#include "support/errors.h"
#include "support/gradcheck.h"
#include "support/oracle.h"
#include "support/process.h"

using namespace hamgan;

namespace {

torch::nn::BatchNorm2d make_bn(int64_t c, bool affine, c10::optional<double> momentum,
                               torch::Dtype dtype) {
  torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(c).affine(affine).momentum(momentum));
  bn->to(dtype);
  if (affine) {
    torch::NoGradGuard ng;
    bn->weight.uniform_(0.5, 1.5);
    bn->bias.uniform_(-0.5, 0.5);
  }
  return bn;
}

// Copies of a module's parameters' grads, then zeroes them.
std::vector<torch::Tensor> take_grads(torch::nn::Module& m) {
  std::vector<torch::Tensor> g;
  for (auto& p : m.parameters()) {
    g.push_back(p.grad().clone());
    p.mutable_grad().zero_();
  }
  return g;
}

// Sync BN with the identity reducer against torch's BN, over `steps` training steps (the
// running stats accumulate), then once in eval mode.
void check_against_torch(bool affine, c10::optional<double> momentum) {
  torch::manual_seed(3);
  IdentityReducer id;
  auto ours = make_bn(5, affine, momentum, torch::kFloat);
  auto ref = make_bn(5, affine, momentum, torch::kFloat);
  {
    torch::NoGradGuard ng;
    for (size_t i = 0; i < ours->parameters().size(); ++i)
      ref->parameters()[i].copy_(ours->parameters()[i]);
  }
  for (int step = 0; step < 3; ++step) {
    // A mean far from 0 relative to the spread: one-pass E[x^2]-mean^2 would lose digits.
    const torch::Tensor x0 = torch::randn({6, 5, 4, 3}) * 0.5 + 20;
    const torch::Tensor r = torch::randn({6, 5, 4, 3});
    torch::Tensor xa = x0.clone().requires_grad_(), xb = x0.clone().requires_grad_();
    const torch::Tensor ya = sync_batch_norm(*ours, xa, id), yb = ref->forward(xb);
    (ya * r).sum().backward();
    (yb * r).sum().backward();
    // fp32: the statistics' summation order differs from ATen's kernel.
    EXPECT_TRUE(test::close(ya, yb, 1e-4, 2e-5)) << "output, step " << step;
    EXPECT_TRUE(test::close(xa.grad(), xb.grad(), 1e-4, 2e-5)) << "input grad, step " << step;
    if (affine) {
      const auto ga = take_grads(*ours), gb = take_grads(*ref);
      for (size_t i = 0; i < ga.size(); ++i)
        EXPECT_TRUE(test::close(ga[i], gb[i], 1e-4, 1e-4)) << "param grad " << i << ", step " << step;
    }
    EXPECT_TRUE(test::close(ours->running_mean, ref->running_mean, 1e-6, 1e-6));
    EXPECT_TRUE(test::close(ours->running_var, ref->running_var, 1e-5, 1e-6));
    EXPECT_EQ(ours->num_batches_tracked.item<int64_t>(), ref->num_batches_tracked.item<int64_t>());
  }
  EXPECT_GT(ref->num_batches_tracked.item<int64_t>(), 0);
  ours->eval();
  ref->eval();
  const torch::Tensor x = torch::randn({2, 5, 4, 3}) + 20;
  EXPECT_TRUE(test::close(sync_batch_norm(*ours, x, id), ref->forward(x), 1e-5, 1e-5)) << "eval";
}

}  // namespace

TEST(SyncBatchNorm, IdentityReducerIsTorchBatchNormAffine) { check_against_torch(true, 0.1); }
TEST(SyncBatchNorm, IdentityReducerIsTorchBatchNormNoAffine) { check_against_torch(false, 0.1); }
TEST(SyncBatchNorm, IdentityReducerIsTorchBatchNormCumulativeMomentum) {
  check_against_torch(true, c10::nullopt);
}

TEST(SyncBatchNorm, GradcheckDouble) {
  torch::manual_seed(4);
  IdentityReducer id;
  auto bn = make_bn(3, true, 0.1, torch::kDouble);
  const torch::Tensor x = (torch::randn({4, 3, 3, 2}, torch::kDouble) + 2).requires_grad_();
  EXPECT_TRUE(test::gradcheck([&] { return sync_batch_norm(*bn, x, id); },
                              {x, bn->weight, bn->bias}));
}

TEST(SyncBatchNorm, AllReduceSumGradcheckDouble) {
  IdentityReducer id;
  const torch::Tensor x = torch::randn({3, 4}, torch::kDouble).requires_grad_();
  EXPECT_TRUE(test::gradcheck([&] { return all_reduce_sum(x, id) * x; }, {x}));
}

TEST(SyncBatchNorm, RejectsWrongShape) {
  IdentityReducer id;
  auto bn = make_bn(3, true, 0.1, torch::kFloat);
  EXPECT_THROW(sync_batch_norm(*bn, torch::randn({2, 4, 3, 3}), id), std::exception);
}

TEST(SyncBatchNorm, RejectsOneValuePerChannelWhenTraining) {
  IdentityReducer id;
  auto bn = make_bn(3, true, 0.1, torch::kFloat);
  const std::string e = test::error_of([&] { sync_batch_norm(*bn, torch::randn({1, 3, 1, 1}), id); });
  EXPECT_NE(e.find("more than 1 value per channel"), std::string::npos) << e;
  EXPECT_TRUE(torch::isfinite(bn->running_var).all().item<bool>());  // nothing half-updated
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 0);
  bn->eval();  // running statistics: one image is fine
  EXPECT_EQ(sync_batch_norm(*bn, torch::randn({1, 3, 1, 1}), id).sizes(), (std::vector<int64_t>{1, 3, 1, 1}));
}

// The generator with every BN on the identity reducer equals the plain generator: every
// BN (the conditional ones in the blocks and the output BN) takes the sync path.
TEST(SyncBatchNorm, GeneratorWithIdentityReducerMatchesPlain) {
  const Config cfg = parse_config(
      "model: {resolution: 32, n_classes: 4, image_channels: 1}\n"
      "generator: {ch: 8, z_dim: 16, context: {type: self_attention, resolution: 16}}\n",
      "sync bn test");
  torch::manual_seed(5);
  Generator a(cfg.model, cfg.generator), b(cfg.model, cfg.generator);
  // Double: fp32 noise through seven BNs would hide a real difference (and the conv biases
  // in front of a BN have an exactly zero gradient, so only noise).
  a->to(torch::kDouble);
  b->to(torch::kDouble);
  {
    torch::NoGradGuard ng;
    auto pa = a->named_parameters(), pb = b->named_parameters();
    for (auto& kv : pa) pb[kv.key()].copy_(kv.value());
    for (auto& kv : a->named_buffers()) b->named_buffers()[kv.key()].copy_(kv.value());
  }
  IdentityReducer id;
  b->set_batch_reducer(&id);
  const torch::Tensor z = torch::randn({6, 16}, torch::kDouble);
  const torch::Tensor y = torch::randint(0, 4, {6}, torch::kLong);
  const torch::Tensor r = torch::randn({6, 1, 32, 32}, torch::kDouble);
  const torch::Tensor oa = a->forward(z, y), ob = b->forward(z, y);
  (oa * r).sum().backward();
  (ob * r).sum().backward();
  EXPECT_TRUE(test::close(ob, oa, 1e-9, 1e-11));
  auto pb = b->named_parameters();
  for (auto& kv : a->named_parameters())
    EXPECT_TRUE(test::close(pb[kv.key()].grad(), kv.value().grad(), 1e-7, 1e-10)) << kv.key();
  auto bb = b->named_buffers();
  int64_t bn_buffers = 0;
  for (auto& kv : a->named_buffers()) {
    if (kv.key().find("running_") == std::string::npos) continue;
    ++bn_buffers;
    EXPECT_TRUE(test::close(bb[kv.key()], kv.value(), 1e-9, 1e-11)) << kv.key();
  }
  EXPECT_GE(bn_buffers, 2 * 7) << "3 blocks x 2 CBN + out_bn, mean and var each";
  // State-dict keys are those of the plain generator.
  EXPECT_EQ(a->named_parameters().keys(), b->named_parameters().keys());
  EXPECT_EQ(a->named_buffers().keys(), b->named_buffers().keys());
}

// ---- 2 processes --------------------------------------------------------------------

namespace {

constexpr int64_t kB = 3, kC = 4;  // per-rank batch, channels

std::string work_dir() { return std::getenv("HAMGAN_SYNC_BN_DIR"); }

// Rank r: rows r*kB.. of x through sync BN; local loss sum(y * R) / kB (each rank's mean,
// as the trainer's losses); parameter grads averaged over ranks.
int worker() {
  at::set_num_threads(1);
  const DistEnv env = dist_env_from_environment();
  std::vector<torch::Tensor> in;  // x, R, weight, bias
  torch::load(in, work_dir() + "/in.pt");
  auto bn = make_bn(kC, true, 0.1, torch::kDouble);
  {
    torch::NoGradGuard ng;
    bn->weight.copy_(in[2]);
    bn->bias.copy_(in[3]);
  }
  DataParallel dp(env);
  const torch::Tensor x = in[0].narrow(0, env.rank * kB, kB).clone().requires_grad_();
  const torch::Tensor r = in[1].narrow(0, env.rank * kB, kB);
  const torch::Tensor y = sync_batch_norm(*bn, x, dp);
  ((y * r).sum() / kB).backward();
  dp.average_gradients(*bn);
  std::vector<torch::Tensor> out = {y.detach(), x.grad(), bn->weight.grad(), bn->bias.grad(),
                                    bn->running_mean, bn->running_var};
  torch::save(out, work_dir() + "/rank" + std::to_string(env.rank) + ".pt");
  dp.barrier();
  return 0;
}

}  // namespace

TEST(SyncBatchNorm, TwoGlooProcessesEqualOneBatchNormOverTheWholeBatch) {
  const std::string dir = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/sync_bn_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  torch::manual_seed(6);
  // Each half gets its own offset, so per-rank statistics would differ from global ones.
  torch::Tensor x = torch::randn({2 * kB, kC, 5, 5}, torch::kDouble) + 1;
  x.narrow(0, kB, kB).add_(3);
  const torch::Tensor r = torch::randn({2 * kB, kC, 5, 5}, torch::kDouble);
  auto ref = make_bn(kC, true, 0.1, torch::kDouble);
  torch::save(std::vector<torch::Tensor>{x, r, ref->weight.detach(), ref->bias.detach()},
              dir + "/in.pt");

  const std::string why = test::run_ranks(2, {"HAMGAN_SYNC_BN_WORKER=1", "HAMGAN_SYNC_BN_DIR=" + dir},
                                          dir + "/rank", 60);
  ASSERT_EQ(why, "");

  // One process, torch's BN over the whole batch, loss = mean over the 2B rows of the
  // per-row losses = (L_0 + L_1) / 2. Rank r's input grads are those of its own L_r plus,
  // through the all-reduce, the other rank's: d(L_0 + L_1)/dx = 2 x this reference.
  const torch::Tensor xr = x.clone().requires_grad_();
  const torch::Tensor y = ref->forward(xr);
  ((y * r).sum() / (2 * kB)).backward();
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<torch::Tensor> got;
    torch::load(got, dir + "/rank" + std::to_string(rank) + ".pt");
    ASSERT_EQ(got.size(), 6u);
    const auto rows = [&](const torch::Tensor& t) { return t.narrow(0, rank * kB, kB); };
    // Double precision: only summation order differs.
    EXPECT_TRUE(test::close(got[0], rows(y.detach()), 1e-10, 1e-12)) << "output, rank " << rank;
    EXPECT_TRUE(test::close(got[1], 2 * rows(xr.grad()), 1e-10, 1e-12)) << "input grad, rank " << rank;
    EXPECT_TRUE(test::close(got[2], ref->weight.grad(), 1e-10, 1e-12)) << "weight grad, rank " << rank;
    EXPECT_TRUE(test::close(got[3], ref->bias.grad(), 1e-10, 1e-12)) << "bias grad, rank " << rank;
    EXPECT_TRUE(test::close(got[4], ref->running_mean, 1e-10, 1e-12)) << "running mean, rank " << rank;
    EXPECT_TRUE(test::close(got[5], ref->running_var, 1e-10, 1e-12)) << "running var, rank " << rank;
  }
  // The test can fail: per-rank statistics (plain BN on half the batch) differ.
  auto local = make_bn(kC, true, 0.1, torch::kDouble);
  {
    torch::NoGradGuard ng;
    local->weight.copy_(ref->weight);
    local->bias.copy_(ref->bias);
  }
  const torch::Tensor y_local = local->forward(x.narrow(0, 0, kB));
  EXPECT_GT((y_local - y.detach().narrow(0, 0, kB)).abs().max().item<double>(), 0.1);
}

int main(int argc, char** argv) { return hamgan::test::test_main(argc, argv, "HAMGAN_SYNC_BN_WORKER", worker); }
