// The training step never waits for the device. On a GPU a read of a tensor's value
// on the host (item(), if (t), nonzero, linalg_solve's error check, BatchNorm's cumulative
// average) blocks until every queued kernel is done; one per step stalls the pipeline. The
// probe counts the operators every such read goes through, ours and LibTorch's, on CPU runs
// of the same step, for every registered context module, with and without data parallel.
// Explicit copies to the host are found by scripts/check_host_reads.py (a CPU run cannot see
// them: they are no-ops there).
#include <gtest/gtest.h>

#include "gan/config/config.h"
#include "gan/train/distributed.h"
#include "gan/train/stop_policy.h"
#include "gan/train/trainer.h"
#include "layers/context/context.h"
#include "support/host_read_probe.h"
#include "support/tiny_run.h"

namespace test_host_reads {

using namespace hamgan;

namespace {

// The probe must see the reads LibTorch makes inside its own operators, or a zero proves
// nothing: each of these is one a step can reach (BatchNorm's
// num_batches_tracked, linalg_solve's error check).
TEST(HostReadProbe, SeesReadsInsideLibTorch) {
  {
    test::HostReadProbe p;
    (void)torch::ones({3}).sum().item<double>();
    EXPECT_GE(p.count(), 1) << "item()";
  }
  {
    // BatchNorm with momentum unset (cumulative average) reads num_batches_tracked per call.
    torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(3).momentum(c10::nullopt));
    const torch::Tensor x = torch::randn({4, 3, 2, 2});
    test::HostReadProbe p;
    bn->forward(x);
    EXPECT_GE(p.count(), 1) << "BatchNorm, momentum unset";
    p.reset();
    torch::nn::BatchNorm2d bn01(torch::nn::BatchNorm2dOptions(3).momentum(0.1));
    bn01->forward(x);
    EXPECT_EQ(p.count(), 0) << "BatchNorm, momentum 0.1: " << p.summary();
  }
  {
    // linalg_solve checks its LU's info on the host, and LibTorch 1.13's linalg_solve_ex (even
    // with check_errors false) reads in its lu_solve; Cholesky and triangular solves (ham_cd's
    // positive definite system) read nothing.
    const torch::Tensor m = torch::randn({3, 3}), a = m.mm(m.t()) + torch::eye(3), b = torch::randn({3, 2});
    test::HostReadProbe p;
    (void)torch::linalg_solve(a, b);
    EXPECT_GE(p.count(), 1) << "linalg_solve";
    p.reset();
    const torch::Tensor l = std::get<0>(torch::linalg_cholesky_ex(a, false, false));
    const torch::Tensor x = torch::linalg_solve_triangular(l.t(), torch::linalg_solve_triangular(l, b, false), true);
    EXPECT_EQ(p.count(), 0) << "Cholesky + triangular solves: " << p.summary();
    EXPECT_TRUE(torch::allclose(a.mm(x), b, 1e-4, 1e-5));
  }
}

// Real batches drawn before the probe starts (loading happens on the host anyway).
class ReplaySource : public BatchSource {
 public:
  ReplaySource(BatchSource& from, int n) {
    for (int i = 0; i < n; ++i) batches_.push_back(from.next());
  }
  Batch next() override { return batches_.at(next_++ % batches_.size()); }
  LoaderState state() const override { return {}; }

 private:
  std::vector<Batch> batches_;
  size_t next_ = 0;
};

std::vector<std::string> module_names() { return context_names(); }

class StepHostReads : public ::testing::TestWithParam<std::string> {};

// Every path of the step (tiny(): n_dis 2, 2 accumulated micro-batches, EMA copy then
// average) with the module in G and D, its first iterations included.
int64_t reads_in_steps(const Config& cfg, DataParallel* dp, std::string* summary) {
  Trainer t(cfg, torch::kCPU);
  if (dp) t.set_data_parallel(dp);
  auto loader = test::synthetic(cfg)(t.micro_batch(), LoaderState{});
  ReplaySource source(*loader, 6);
  test::HostReadProbe probe;
  for (int i = 0; i < 4; ++i) {
    t.step(source);
    (void)t.stats();  // what the reporter keeps per step: a tensor on the device
  }
  *summary = probe.summary();
  return probe.count();
}

TEST_P(StepHostReads, NoneInTheTrainingStep) {
  const std::string& type = GetParam();
  const Config cfg = test::tiny("generator.context.type=" + type + " discriminator.context.type=" + type);
  std::string summary;
  EXPECT_EQ(reads_in_steps(cfg, nullptr, &summary), 0) << type << ": " << summary;
}

INSTANTIATE_TEST_SUITE_P(Registry, StepHostReads, ::testing::ValuesIn(module_names()),
                         [](const auto& info) { return info.param; });

// D's regularisers: the augmentation's draws are copies to the device, LeCam's
// anchors stay on it; neither may read.
TEST(StepHostReads, NoneWithDiffAugmentAndLeCam) {
  const Config cfg = test::tiny("train.diffaug=color,translation,cutout train.lecam_weight=0.3");
  std::string summary;
  EXPECT_EQ(reads_in_steps(cfg, nullptr, &summary), 0) << summary;
}

// Data parallel (one rank over Gloo): gradient averaging, synchronised BN and the stop
// policy's agreement, which on a GPU happens only at report points.
TEST(StepHostReads, NoneWithDataParallelAndSyncBn) {
  DistEnv env;
  env.master_port = free_loopback_port();
  DataParallel dp(env);
  const Config cfg = test::tiny("train.sync_bn=true");
  std::string summary;
  EXPECT_EQ(reads_in_steps(cfg, &dp, &summary), 0) << summary;

  StopPolicy stop(/*time_limit_minutes=*/1, /*handle_signals=*/false, &dp, /*agree_every_step=*/false);
  stop.start();
  test::HostReadProbe probe;
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(stop.check(/*report_point=*/false));
  EXPECT_EQ(probe.count(), 0) << probe.summary();
  EXPECT_FALSE(stop.check(/*report_point=*/true));  // the agreement itself reads, here only
  EXPECT_GE(probe.count(), 1);
}

}  // namespace

}  // namespace test_host_reads
