// The trainer: losses against hand-computed values (plus gradcheck), the EMA update, the lr
// schedule, standing statistics, exact CPU resume (2N straight vs N + resume + N, bit for
// bit), the run directory's lock, NaN stop and SIGINT stop. Checkpoints: test_checkpoint.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/state_dict.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/data/synthetic.h"
#include "gan/models/standing_stats.h"
#include "gan/train/ema.h"
#include "gan/train/losses.h"
#include "gan/train/lr_schedule.h"
#include "gan/train/train_hooks.h"
#include "gan/train/trainer.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "io/zip_reader.h"
#include "gan/train/train_stats_plot.h"
#include "io/decode.h"
#include "io/image.h"
#include "support/errors.h"
#include "support/gradcheck.h"
#include "support/state_dicts.h"
#include "support/tiny_run.h"

namespace test_train {

using namespace hamgan;
using namespace hamgan::test;
namespace fs = std::filesystem;

namespace {

double softplus(double x) { return std::log1p(std::exp(x)); }

// The inputs of a hand-written step on the tiny config: `draws` latent draws of `mb` images and
// one real batch of `mb` (3 classes, 1 channel, 32 px), from torch's global seed `seed`.
struct StepInputs {
  std::vector<std::pair<torch::Tensor, torch::Tensor>> zy;
  Batch real;
};
StepInputs step_inputs(const Config& cfg, int64_t draws, int64_t mb, uint64_t seed) {
  torch::manual_seed(seed);
  StepInputs in;
  for (int64_t i = 0; i < draws; ++i)
    in.zy.emplace_back(torch::randn({mb, cfg.generator.z_dim}), torch::randint(3, {mb}, torch::kLong));
  in.real.images = torch::rand({mb, 1, 32, 32}) * 2 - 1;
  in.real.labels = torch::randint(3, {mb}, torch::kLong);
  return in;
}

}  // namespace

TEST(Losses, HingeMatchesHandComputedValues) {
  const auto r = torch::tensor({2.0, 0.5, -1.0}, torch::kDouble),
             f = torch::tensor({-2.0, 0.3, 1.0}, torch::kDouble);
  const DLoss l = d_loss(GanLoss::Hinge, r, f);
  // relu(1 - r) = 0, 0.5, 2; relu(1 + f) = 0, 1.3, 2; -mean(f) = 0.7 / 3.
  EXPECT_NEAR(l.real.item<double>(), 2.5 / 3, 1e-12);
  EXPECT_NEAR(l.fake.item<double>(), 3.3 / 3, 1e-12);
  EXPECT_NEAR(g_loss(GanLoss::Hinge, f).item<double>(), 0.7 / 3, 1e-12);
}

TEST(Losses, NonSaturatingMatchesHandComputedValues) {
  const auto r = torch::tensor({2.0, 0.5, -1.0}, torch::kDouble),
             f = torch::tensor({-2.0, 0.3, 1.0}, torch::kDouble);
  const DLoss l = d_loss(GanLoss::NonSaturating, r, f);
  EXPECT_NEAR(l.real.item<double>(), (softplus(-2.0) + softplus(-0.5) + softplus(1.0)) / 3, 1e-12);
  EXPECT_NEAR(l.fake.item<double>(), (softplus(-2.0) + softplus(0.3) + softplus(1.0)) / 3, 1e-12);
  EXPECT_NEAR(g_loss(GanLoss::NonSaturating, f).item<double>(),
              (softplus(2.0) + softplus(-0.3) + softplus(-1.0)) / 3, 1e-12);
  EXPECT_EQ(tiny("train.loss=nonsaturating").train.loss, GanLoss::NonSaturating);
  EXPECT_THROW(tiny("train.loss=wasserstein"), Error);
}

// RpGAN's pairs, i with i: L_D = mean softplus(f - r), L_G = mean softplus(r - f).
TEST(Losses, RelativisticPairingMatchesHandComputedValues) {
  const auto r = torch::tensor({2.0, 0.5, -1.0}, torch::kDouble),
             f = torch::tensor({-2.0, 0.3, 1.0}, torch::kDouble);
  const DLoss l = d_loss(GanLoss::Relativistic, r, f);
  EXPECT_NEAR(l.real.item<double>(), (softplus(-4.0) + softplus(-0.2) + softplus(2.0)) / 3, 1e-12);
  EXPECT_EQ(l.fake.item<double>(), 0.0);
  EXPECT_NEAR(g_loss(GanLoss::Relativistic, f, r).item<double>(),
              (softplus(4.0) + softplus(0.2) + softplus(-2.0)) / 3, 1e-12);
  // Pairing, not means: swapping two reals changes the loss (a relativistic *average* would not).
  const auto r_swapped = torch::tensor({0.5, 2.0, -1.0}, torch::kDouble);
  EXPECT_GT(std::abs(d_loss(GanLoss::Relativistic, r_swapped, f).real.item<double>() - l.real.item<double>()), 1e-3);
  EXPECT_EQ(tiny("train.loss=rpgan").train.loss, GanLoss::Relativistic);
}

TEST(Losses, RelativisticPairingNamesMissingOrUnpairedReals) {
  const auto f = torch::zeros({3}, torch::kDouble);
  for (const torch::Tensor& r : {torch::Tensor(), torch::zeros({4}, torch::kDouble)}) {
    const std::string e = error_of([&] { g_loss(GanLoss::Relativistic, f, r); });
    EXPECT_NE(e.find("rpgan"), std::string::npos) << e;
  }
  const std::string e = error_of([&] { d_loss(GanLoss::Relativistic, torch::zeros({2}, torch::kDouble), f); });
  EXPECT_NE(e.find("[2] real and [3] fake"), std::string::npos) << e;
}

TEST(Losses, Gradcheck) {
  // Away from the hinge kinks (|1 -+ x| >= 0.5), where the gradient is defined.
  for (GanLoss t : {GanLoss::Hinge, GanLoss::NonSaturating, GanLoss::Relativistic}) {
    auto r = torch::tensor({2.0, 0.5, -1.0, 3.0}, torch::dtype(torch::kDouble).requires_grad(true));
    auto f = torch::tensor({-2.0, 0.3, 1.0, -0.5}, torch::dtype(torch::kDouble).requires_grad(true));
    EXPECT_TRUE(test::gradcheck([&] { const DLoss l = d_loss(t, r, f); return l.real + l.fake; }, {r, f}));
    if (g_loss_needs_real(t))
      EXPECT_TRUE(test::gradcheck([&] { return g_loss(t, f, r); }, {f, r}));
    else
      EXPECT_TRUE(test::gradcheck([&] { return g_loss(t, f); }, {f}));
  }
}

TEST(Ema, CopiesBeforeStartThenAveragesAndCopiesBuffers) {
  torch::nn::BatchNorm1d src(3), dst(3);
  torch::NoGradGuard ng;
  src->weight.copy_(torch::tensor({1.0f, 2.0f, 3.0f}));
  Ema ema(*src, *dst, 0.75, /*start=*/2);
  EXPECT_TRUE(torch::equal(dst->weight, src->weight));
  src->weight.fill_(5.0f);
  src->running_mean.fill_(-1.0f);
  ema.update(1);  // before start: a copy
  EXPECT_TRUE(torch::equal(dst->weight, torch::full({3}, 5.0f)));
  src->weight.fill_(9.0f);
  ema.update(2);  // 0.75 * 5 + 0.25 * 9 = 6
  EXPECT_TRUE(torch::allclose(dst->weight, torch::full({3}, 6.0f), 0, 1e-6));
  EXPECT_TRUE(torch::equal(dst->running_mean, src->running_mean));  // buffers: the live G's
  EXPECT_TRUE(torch::equal(dst->num_batches_tracked, src->num_batches_tracked));
}






TEST(Resume, TwoNStraightEqualsNPlusResumePlusNBitForBit) {
  const std::string a = fresh_dir("straight"), b = fresh_dir("resumed");
  const Ran straight = run(tiny(), a);
  const Ran first = run(tiny("train.iterations=3 train.checkpoint_every=0"), b);
  const Ran second = run(tiny(), b);
  ASSERT_EQ(straight.history.size(), 6u);
  ASSERT_EQ(first.history.size(), 3u);
  ASSERT_EQ(second.history.size(), 3u);
  for (size_t i = 0; i < 6; ++i) {
    const IterStats& r = i < 3 ? first.history[i] : second.history[i - 3];
    for (size_t j = 0; j < stat_names().size(); ++j)
      EXPECT_EQ(std::memcmp(&straight.history[i][j], &r[j], sizeof(float)), 0)
          << "iteration " << i + 1 << " stat " << j << ": " << straight.history[i][j] << " vs " << r[j];
  }
  const Loaded x = load_models(checkpoint_path(a + "/checkpoints", 6));
  const Loaded y = load_models(checkpoint_path(b + "/checkpoints", 6));
  EXPECT_TRUE(identical(x.g, y.g));
  EXPECT_TRUE(identical(x.d, y.d));
  EXPECT_TRUE(identical(x.g_ema, y.g_ema));
  // What a run leaves behind: sample grids, one metrics line per iteration.
  EXPECT_TRUE(fs::exists(a + "/samples/samples_000000003.png"));
  EXPECT_TRUE(fs::exists(a + "/samples/samples_000000006.png"));
  std::ifstream log(a + "/metrics.jsonl");
  int lines = 0;
  for (std::string l; std::getline(log, l);) lines += l.find("\"g_loss\"") != std::string::npos;
  EXPECT_EQ(lines, 6);
  // Grids a person can read (3 class rows of 8 cells upscaled to 64 px, a label column of 18 px)
  // and the loss plot, redrawn at every report; the resumed run's log reads as one run.
  EXPECT_EQ(to_tensor(decode_image(a + "/samples/samples_000000006.png")).sizes(), (std::vector<int64_t>{3, 200, 548}));
  EXPECT_EQ(to_tensor(decode_image(a + "/metrics.png")).sizes(), (std::vector<int64_t>{3, 800, 640}));
  EXPECT_EQ(read_train_stats_log(b + "/metrics.jsonl").size(), 6u);
}

namespace {
// The iteration of one metrics.jsonl line.
double read_its(const std::string& line) {
  const size_t at = line.find("\"iteration\": ");
  return at == std::string::npos ? -1 : std::stod(line.substr(at + 13));
}

// The error of a tiny run whose D weights turn NaN after iteration `poison_at` ("" if none).
std::string divergence_error(const std::string& dir, int64_t poison_at) {
  TrainHooks hooks;
  hooks.after_step = [poison_at](Trainer& t) {
    if (t.iteration() != poison_at) return;
    torch::NoGradGuard ng;
    for (auto& p : t.d()->parameters()) p.fill_(std::nanf(""));
  };
  try {
    run(tiny(), dir, hooks);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Stop, NanLossStopsNamingTheIterationAndKeepsLastCheckpoint) {
  const std::string dir = fresh_dir("nan");
  const std::string m = divergence_error(dir, 4);
  ASSERT_FALSE(m.empty()) << "expected an error";
  EXPECT_NE(m.find("at iteration 5"), std::string::npos) << m;
  EXPECT_NE(m.find("nan"), std::string::npos) << m;
  EXPECT_NE(m.find("the last good checkpoint, " + checkpoint_path(dir + "/checkpoints", 3) + ", is kept"),
            std::string::npos) << m;
  const auto all = list_checkpoints(dir + "/checkpoints");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], checkpoint_path(dir + "/checkpoints", 3));
  EXPECT_EQ(load_checkpoint(all[0]).iteration, 3);
}

// An eval point writes a checkpoint, so it checks for NaN first, as a checkpoint point does: a
// model that diverges just before one leaves the last good checkpoint kept (keep_checkpoints 1
// would otherwise prune it for the NaN one) and is never scored.
TEST(Stop, NanBeforeAnEvalPointIsNeitherCheckpointedNorScored) {
  const std::string dir = fresh_dir("nan_eval");
  const Config cfg = tiny("train.log_every=100 train.sample_every=0 train.checkpoint_every=3 train.keep_checkpoints=1 "
                          "eval.every=5");
  TrainHooks hooks;
  hooks.after_step = [](Trainer& t) {
    if (t.iteration() != 4) return;
    torch::NoGradGuard ng;
    for (auto& p : t.d()->parameters()) p.fill_(std::nanf(""));
  };
  std::ostringstream sink;
  TrainOptions opt;
  opt.out_dir = dir;
  opt.out = &sink;
  int scores = 0;
  opt.eval = [&scores](int64_t, const std::string&, const PhaseProgress::Say&, TensorBoardLog*, const EvalRanks&) {
    ++scores;
  };
  std::string m;
  try {
    train(cfg, opt, synthetic(cfg), hooks);
  } catch (const Error& e) {
    m = e.what();
  }
  ASSERT_FALSE(m.empty()) << "expected an error";
  EXPECT_NE(m.find("at iteration 5"), std::string::npos) << m;
  EXPECT_NE(m.find("the last good checkpoint, " + checkpoint_path(dir + "/checkpoints", 3) + ", is kept"),
            std::string::npos) << m;
  EXPECT_EQ(list_checkpoints(dir + "/checkpoints"), std::vector<std::string>{checkpoint_path(dir + "/checkpoints", 3)});
  EXPECT_EQ(scores, 0);
}

// A run killed after its checkpoint at 3 had logged iterations 4 and 5 and half a line: the
// resumed run's metrics.jsonl holds each iteration once, in order, as one run's.
TEST(Stop, AResumedRunDropsWhatTheKilledRunLoggedAfterItsCheckpoint) {
  const std::string dir = fresh_dir("killed_log");
  run(tiny("train.iterations=3"), dir);
  {
    std::ofstream log(dir + "/metrics.jsonl", std::ios::app);
    log << "{\"iteration\": 4, \"g_loss\": 1}\n{\"iteration\": 5, \"g_loss\": 1}\n{\"iteration\": 6, \"g_lo";
  }
  run(tiny(), dir);
  std::ifstream log(dir + "/metrics.jsonl");
  std::vector<double> its;
  for (std::string l; std::getline(log, l);) its.push_back(read_its(l));
  EXPECT_EQ(its, (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

// The last iteration always gets a grid, also when it is a checkpoint point but not a sample
// point (6 with checkpoint_every 3 and sample_every 4).
TEST(Train, TheLastIterationGetsAGridAtACheckpointPointToo) {
  const std::string dir = fresh_dir("last_grid");
  run(tiny("train.sample_every=4 train.checkpoint_every=3"), dir);
  EXPECT_TRUE(fs::exists(dir + "/samples/samples_000000004.png"));
  EXPECT_TRUE(fs::exists(dir + "/samples/samples_000000006.png"));
  EXPECT_FALSE(fs::exists(dir + "/samples/samples_000000003.png"));
}

// train.ema may change on resume, both ways: a run resumed once with EMA off (its checkpoint has
// no EMA G) resumes with EMA on again, the average starting from G's weights, and says so.
TEST(Train, EmaTurnedBackOnAfterAResumeWithoutIt) {
  const std::string dir = fresh_dir("ema_back");
  run(tiny("train.iterations=3 train.ema=false"), dir);
  EXPECT_FALSE(load_checkpoint(checkpoint_path(dir + "/checkpoints", 3)).has_ema);
  const Ran r = run(tiny(), dir);
  EXPECT_NE(r.log.find("has no EMA generator (train.ema was off): the EMA G starts from G's weights"),
            std::string::npos) << r.log;
  EXPECT_EQ(r.history.size(), 3u);
  EXPECT_TRUE(load_checkpoint(checkpoint_path(dir + "/checkpoints", 6)).has_ema);
}

TEST(Stop, SigintFinishesTheStepCheckpointsAndReturns) {
  const std::string dir = fresh_dir("sigint");
  TrainHooks hooks;
  hooks.after_step = [](Trainer& t) {
    if (t.iteration() == 2) std::raise(SIGINT);
  };
  const Ran r = run(tiny(), dir, hooks);
  EXPECT_EQ(r.outcome, TrainOutcome::Interrupted);
  EXPECT_EQ(r.iteration, 2);
  const CheckpointData stopped = load_checkpoint(checkpoint_path(dir + "/checkpoints", 2));
  EXPECT_EQ(stopped.iteration, 2);
  // Answered within the step and the write: standing statistics are left to the
  // loader (flag 0, load_generator computes them), and no grid is drawn.
  EXPECT_EQ(stopped.ema_standing, 0);
  EXPECT_FALSE(fs::exists(dir + "/samples/samples_000000002.png"));
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);  // the previous handler is back
  // The run continues where it stopped.
  EXPECT_EQ(run(tiny(), dir).history.size(), 4u);
}

// ---- Run directory locking, divergence, EMA warm-up, standing statistics ----




// A second process on the same --out fails at once, naming the holder's PID; the run
// directory is left as it was.
TEST(Train, RunDirectoryIsLockedAgainstASecondWriter) {
  const std::string dir = fresh_dir("locked");
  fs::create_directories(dir);
  {
    io::DirLock held(dir);
    try {
      run(tiny(), dir);
      FAIL() << "a second writer was let in";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(dir), std::string::npos) << m;
      EXPECT_NE(m.find("PID " + std::to_string(::getpid())), std::string::npos) << m;
    }
    EXPECT_TRUE(list_checkpoints(dir + "/checkpoints").empty());
    EXPECT_FALSE(fs::exists(dir + "/metrics.jsonl"));
  }
  EXPECT_EQ(run(tiny(), dir).history.size(), 6u);  // free again once the holder is gone
}


// Divergence before any checkpoint does not claim that one is kept.
TEST(Stop, NanBeforeAnyCheckpointSaysNoneWasWritten) {
  const std::string dir = fresh_dir("nan_first");
  const std::string m = divergence_error(dir, 1);
  ASSERT_FALSE(m.empty()) << "expected an error";
  EXPECT_NE(m.find("at iteration 2"), std::string::npos) << m;
  EXPECT_NE(m.find("no checkpoint was written"), std::string::npos) << m;
  EXPECT_EQ(m.find("is kept"), std::string::npos) << m;
  EXPECT_TRUE(list_checkpoints(dir + "/checkpoints").empty());
}

// The EMA warm-up, d_n = min(decay, 0.5^(1 / (rampup n))) with n the updates so far,
// against values computed by hand; and the update uses it.
TEST(Ema, RampUpBoundsTheHalfLifeByTheUpdatesSoFar) {
  torch::nn::Linear src(1, 1), dst(1, 1);
  Ema ema(*src, *dst, 0.999, /*start=*/10, /*rampup=*/0.05);
  EXPECT_EQ(ema.decay_at(9), 0.0);
  EXPECT_NEAR(ema.decay_at(10), std::pow(0.5, 1 / 0.05), 1e-15);        // n = 1: ~1e-6, a copy
  EXPECT_NEAR(ema.decay_at(29), std::pow(0.5, 1.0 / 1.0), 1e-15);       // n = 20: half-life 1
  EXPECT_NEAR(ema.decay_at(209), std::pow(0.5, 1.0 / 10.0), 1e-15);     // n = 200: half-life 10
  EXPECT_DOUBLE_EQ(ema.decay_at(100000), 0.999);  // half-life 693 < 0.05 n: the configured decay
  Ema plain(*src, *dst, 0.999, 10);
  EXPECT_DOUBLE_EQ(plain.decay_at(10), 0.999);
  // One update at n = 20 (d = 0.5) averages halfway.
  torch::NoGradGuard ng;
  Ema at(*src, *dst, 0.999, 0, 0.05);
  src->weight.fill_(2.0f);
  dst->weight.fill_(0.0f);
  at.update(19);
  EXPECT_NEAR(dst->weight.item<float>(), 1.0f, 1e-6);
}

TEST(LrSchedule, LinearDecayFollowsTheBudgetThatEndsFirst) {
  TrainConfig t;
  t.iterations = 1000;
  EXPECT_DOUBLE_EQ(budget_progress(t, 250, 1e9), 0.25);  // no time limit: iterations only
  t.time_limit_minutes = 10;
  EXPECT_DOUBLE_EQ(budget_progress(t, 250, 60.0), 0.25);   // 1 of 10 min: iterations lead
  EXPECT_DOUBLE_EQ(budget_progress(t, 250, 450.0), 0.75);  // 7.5 of 10 min: the clock leads
  EXPECT_DOUBLE_EQ(budget_progress(t, 250, 9999.0), 1.0);
  EXPECT_DOUBLE_EQ(lr_scale(t, 0.9), 1.0);  // lr_decay none
  t.lr_decay = LrDecay::Linear;
  t.lr_decay_from = 0.6;
  EXPECT_DOUBLE_EQ(lr_scale(t, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(lr_scale(t, 0.6), 1.0);
  EXPECT_NEAR(lr_scale(t, 0.7), 0.75, 1e-15);
  EXPECT_NEAR(lr_scale(t, 0.9), 0.25, 1e-15);
  EXPECT_DOUBLE_EQ(lr_scale(t, 1.0), 0.0);
  EXPECT_THROW(parse_config("train: {lr_decay: cosine}", "cfg"), Error);
  EXPECT_THROW(parse_config("train: {lr_decay_from: 1.0}", "cfg"), Error);
}

// The optimizers apply the scaled rates: at scale 0 a step leaves every weight as it was.
TEST(LrSchedule, ZeroScaleFreezesTheWeightsAndTheLogShowsTheRates) {
  Trainer t(tiny(), torch::kCPU);
  auto source = synthetic(tiny())(t.micro_batch(), LoaderState{});
  t.step(*source);  // Adam's moments non-zero from here
  // Parameters only: BN running statistics and SN's u move at any rate.
  auto params = [](torch::nn::Module& m) {
    TensorMap p;
    for (const auto& kv : m.named_parameters()) p[kv.key()] = kv.value().detach().clone();
    return p;
  };
  const TensorMap g0 = params(*t.g()), d0 = params(*t.d());
  t.set_lr_scale(0.0);
  t.step(*source);
  EXPECT_TRUE(identical(params(*t.g()), g0));
  EXPECT_TRUE(identical(params(*t.d()), d0));
  t.set_lr_scale(1.0);
  t.step(*source);
  int moved = 0;
  for (const auto& [k, v] : params(*t.g())) moved += !torch::equal(v, g0.at(k));
  EXPECT_GT(moved, 0) << "at scale 1 the step changes G";

  // A run: the rate used at iteration i comes from progress (i - 1) / 6; a resumed run follows
  // the same schedule.
  const std::string a = fresh_dir("lr_straight"), b = fresh_dir("lr_resumed");
  run(tiny("train.lr_decay=linear train.lr_decay_from=0.5"), a);
  fs::create_directories(b + "/checkpoints");  // b resumes from a's checkpoint 3
  fs::copy_file(checkpoint_path(a + "/checkpoints", 3), checkpoint_path(b + "/checkpoints", 3));
  run(tiny("train.lr_decay=linear train.lr_decay_from=0.5"), b);
  const auto log = read_train_stats_log(a + "/metrics.jsonl");
  ASSERT_EQ(log.size(), 6u);
  const double expected[] = {1, 1, 1, 1, 2.0 / 3, 1.0 / 3};
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(log[i].at("g_lr"), tiny().train.g_lr * expected[i], 1e-12) << "iteration " << i + 1;
    EXPECT_NEAR(log[i].at("d_lr"), tiny().train.d_lr * expected[i], 1e-12) << "iteration " << i + 1;
  }
  EXPECT_TRUE(identical(load_models(checkpoint_path(a + "/checkpoints", 6)).g,
                        load_models(checkpoint_path(b + "/checkpoints", 6)).g));
}

// Standing statistics equal the BN statistics averaged by hand: each batch's statistics
// read from a BN with momentum 1 (running = that batch's), then the plain mean over batches.
TEST(StandingStats, EqualTheHandAveragedBatchStatistics) {
  const Config cfg = tiny();
  torch::manual_seed(5);
  Generator g(cfg.model, cfg.generator);
  StandingStatsOptions o;
  o.batches = 7;
  o.batch_size = 3;
  o.n_classes = cfg.model.n_classes;
  o.seed = 42;
  std::vector<std::string> names;
  std::vector<torch::nn::BatchNorm2dImpl*> bns;
  for (const auto& kv : g->named_modules())
    if (auto* bn = kv.value()->as<torch::nn::BatchNorm2dImpl>()) names.push_back(kv.key()), bns.push_back(bn);
  ASSERT_GE(bns.size(), 3u);
  const TensorMap before = state_dict(*g);

  // By hand: the same (z, y) stream, momentum 1, sums over batches.
  Generator h(cfg.model, cfg.generator);
  load_state_dict(*h, before, "copy");
  std::vector<torch::nn::BatchNorm2dImpl*> hb;
  for (const auto& kv : h->named_modules())
    if (auto* bn = kv.value()->as<torch::nn::BatchNorm2dImpl>()) hb.push_back(bn);
  std::vector<torch::Tensor> mean(hb.size()), var(hb.size());
  h->eval();
  for (auto* bn : hb) bn->options.momentum(1.0), bn->train();
  at::Generator gen = at::detail::createCPUGenerator(o.seed);
  {
    torch::NoGradGuard ng;
    for (int64_t b = 0; b < o.batches; ++b) {
      const torch::Tensor z = torch::randn({o.batch_size, cfg.generator.z_dim}, gen);
      const torch::Tensor y = torch::randint(o.n_classes, {o.batch_size}, gen, torch::kLong);
      h->forward(z, y);
      for (size_t i = 0; i < hb.size(); ++i) {
        const torch::Tensor m = hb[i]->running_mean.to(torch::kDouble), v = hb[i]->running_var.to(torch::kDouble);
        mean[i] = b ? mean[i] + m : m;
        var[i] = b ? var[i] + v : v;
      }
    }
  }

  accumulate_standing_stats(*g, o);
  EXPECT_FALSE(g->is_training());
  for (size_t i = 0; i < bns.size(); ++i) {
    EXPECT_FALSE(bns[i]->is_training()) << names[i];
    EXPECT_TRUE(bns[i]->options.momentum().has_value()) << names[i];  // momentum restored
    EXPECT_TRUE(torch::allclose(bns[i]->running_mean.to(torch::kDouble), mean[i] / o.batches, 1e-5, 1e-6)) << names[i];
    EXPECT_TRUE(torch::allclose(bns[i]->running_var.to(torch::kDouble), var[i] / o.batches, 1e-5, 1e-6)) << names[i];
  }
  // Weights and every non-BN buffer (spectral norm's u, v) are untouched.
  const TensorMap after = state_dict(*g);
  for (const auto& [k, v] : before) {
    if (k.find("running_") != std::string::npos || k.find("num_batches_tracked") != std::string::npos) continue;
    EXPECT_TRUE(torch::equal(v, after.at(k))) << k;
  }
}

// The trainer stores standing statistics with the EMA G (flagged), sampling a checkpoint
// uses them as stored, and an older checkpoint without them gets them at load.
TEST(StandingStats, StoredWithCheckpointsAndAppliedToOlderOnes) {
  const Config cfg = tiny("train.ema_standing_batches=5");
  const std::string dir = fresh_dir("standing");
  fs::create_directories(dir);
  Trainer t(cfg, torch::kCPU);
  auto src = synthetic(cfg)(t.micro_batch(), {});
  for (int i = 0; i < 3; ++i) t.step(*src);
  const std::string path = checkpoint_path(dir, 3);
  t.save(path, src->state());
  const CheckpointData c = load_checkpoint(path);
  EXPECT_EQ(c.ema_standing, 5);
  // What was stored is the standing statistics of the stored EMA weights.
  Generator want(cfg.model, cfg.generator);
  c.load_module("g_ema", *want);
  const TensorMap stored = state_dict(*want);
  accumulate_standing_stats(*want, standing_stats_options(cfg));
  EXPECT_TRUE(identical(stored, state_dict(*want)));
  // And they differ from G's own running statistics.
  Generator live(cfg.model, cfg.generator);
  c.load_module("g", *live);
  EXPECT_FALSE(torch::equal(state_dict(*live).at("out_bn.running_mean"), stored.at("out_bn.running_mean")));
  // An older checkpoint (no flag, G's statistics in the EMA G) gets them when loaded.
  CheckpointWrite w;
  w.iteration = 3;
  w.config_yaml = to_yaml(cfg.resolved);
  w.g = t.g().get();
  w.d = t.d().get();
  Generator old_ema(cfg.model, cfg.generator);
  c.load_module("g_ema", *old_ema);
  {
    torch::NoGradGuard ng;
    for (auto& kv : old_ema->named_buffers()) kv.value().copy_(state_dict(*live).at(kv.key()));
  }
  w.g_ema = old_ema.get();
  torch::optim::Adam og(t.g()->parameters()), od(t.d()->parameters());
  w.opt_g = &og;
  w.opt_d = &od;
  const std::string old_path = checkpoint_path(dir, 4);
  save_checkpoint(old_path, w);
  const CheckpointData oc = load_checkpoint(old_path);
  EXPECT_EQ(oc.ema_standing, 0);
  EXPECT_TRUE(identical(state_dict(*load_generator(oc, true)), stored));
}

// train.d_beta1: D's Adam moment, G's unless given; in (-1, 1), so below 0 (negative momentum,
// Gidel et al. 2019), which LibTorch's Adam constructor refuses. Three D updates against Adam as
// Kingma & Ba's Algorithm 1 writes it (m, v, their bias corrections, eps outside the root), in
// doubles: after the first, the moment extrapolates from the previous gradient.
TEST(NegativeMomentum, DStepsAreAdamOfThePapersEquations) {
  EXPECT_DOUBLE_EQ(tiny("train.beta1=0.3").train.d_beta1, 0.3);  // a config that sets beta1 only keeps D's
  EXPECT_DOUBLE_EQ(tiny("train.beta1=0.3 train.d_beta1=0.1").train.d_beta1, 0.1);
  EXPECT_DOUBLE_EQ(tiny("train.beta1=0.3 train.d_beta1=0.1").train.beta1, 0.3);

  torch::set_default_dtype(caffe2::TypeMeta::Make<double>());
  const Config cfg = tiny(
      "train.n_dis=1 train.accumulate=1 train.amp=false train.channels_last=false train.seed=4 "
      "train.beta1=0.2 train.d_beta1=-0.5 train.beta2=0.9 train.adam_eps=1e-6 train.d_lr=0.01");
  const double b1 = -0.5, b2 = 0.9, eps = 1e-6, lr = 0.01;
  Trainer t(cfg, torch::kCPU);
  const auto betas = [](torch::optim::Adam& o) {
    return static_cast<torch::optim::AdamOptions&>(o.param_groups().at(0).options()).betas();
  };
  EXPECT_EQ(betas(t.opt_d()), std::make_tuple(b1, b2));
  EXPECT_EQ(betas(t.opt_g()), std::make_tuple(0.2, b2));

  torch::manual_seed(5);
  Batch real;
  real.images = torch::rand({4, 1, 32, 32}) * 2 - 1;
  real.labels = torch::randint(3, {4}, torch::kLong);
  FixedSource src(real);

  std::map<std::string, torch::Tensor> prev, m, v;
  for (const auto& p : t.d()->named_parameters()) prev[p.key()] = p.value().detach().clone();
  ASSERT_GT(prev.size(), 10u);
  for (int s = 1; s <= 3; ++s) {
    t.step(src);
    for (const auto& p : t.d()->named_parameters()) {
      // D's gradient of this step: G's step treats D's weights as constants and leaves it.
      const torch::Tensor g = p.value().grad();
      ASSERT_TRUE(g.defined()) << p.key();
      torch::Tensor& mk = m[p.key()];
      torch::Tensor& vk = v[p.key()];
      mk = s == 1 ? (1 - b1) * g : b1 * mk + (1 - b1) * g;
      vk = s == 1 ? (1 - b2) * g * g : b2 * vk + (1 - b2) * g * g;
      const torch::Tensor m_hat = mk / (1 - std::pow(b1, s)), v_hat = vk / (1 - std::pow(b2, s));
      const torch::Tensor want = prev[p.key()] - lr * m_hat / (v_hat.sqrt() + eps);
      EXPECT_TRUE(torch::allclose(p.value(), want, 1e-10, 1e-12)) << "step " << s << " " << p.key();
      prev[p.key()] = p.value().detach().clone();
    }
  }
  torch::set_default_dtype(caffe2::TypeMeta::Make<float>());
}

// train.reuse_fake: G's step takes the D step's fakes (one z draw and one G forward per
// micro-batch, not two) and its gradient is that of g_loss(D'(G(z))) for those z, D' being D
// after its update. Reference by hand on a twin trainer (same seed, so the same weights): G
// forward with grad, D's step on the detached fakes, then D's updated parameters (copied
// from the trainer; D's own SN buffers follow the same forwards) and G's backward. Under RpGAN,
// G's loss pairs each fake with the D step's real of the same micro-batch, through D' in eval
// mode (the fakes' spectral norms). Normal init: orthogonal weights have one singular value, so
// their spectral norms would not move between power iterations and hide which ones ran.
class ReuseFake : public ::testing::TestWithParam<GanLoss> {};

TEST_P(ReuseFake, GStepUsesTheDStepFakesAndTheUpdatedD) {
  torch::set_default_dtype(caffe2::TypeMeta::Make<double>());
  const GanLoss loss = GetParam();
  const Config cfg = tiny(
      "train.n_dis=1 train.accumulate=2 train.reuse_fake=true train.amp=false "
      "train.channels_last=false train.seed=3 model.init=normal train.loss=" + word_of(loss, kLossWords));
  const int64_t k = cfg.train.accumulate, mb = cfg.train.batch_size / k;
  const StepInputs in = step_inputs(cfg, k, mb, 9);
  const auto& zy = in.zy;
  const Batch& real = in.real;
  FixedSource src(real);

  Trainer t(cfg, torch::kCPU), ref(cfg, torch::kCPU);
  ASSERT_TRUE(identical(state_dict(*t.g()), state_dict(*ref.g())));
  ASSERT_TRUE(identical(state_dict(*t.d()), state_dict(*ref.d())));
  ASSERT_EQ(t.g()->parameters()[0].scalar_type(), torch::kDouble);
  size_t draws = 0;
  script_latents(t, [&](int64_t n) {
    EXPECT_EQ(n, mb);
    if (draws >= zy.size()) throw std::runtime_error("more latent draws than micro-batches");
    return zy[draws++];
  });
  t.step(src);
  EXPECT_EQ(draws, static_cast<size_t>(k)) << "one draw per micro-batch";

  Generator& g = ref.g();
  Discriminator& d = ref.d();
  std::vector<torch::Tensor> fakes;
  for (int64_t a = 0; a < k; ++a) {
    const torch::Tensor fake = g->forward(zy[a].first, zy[a].second);
    fakes.push_back(fake);
    // The losses run in fp32 on the logits, as the trainer's (gan/train/losses.h).
    const torch::Tensor out = d->forward(torch::cat({real.images, fake.detach()}),
                                         torch::cat({real.labels, zy[a].second})).to(torch::kFloat);
    const DLoss l = d_loss(loss, out.narrow(0, 0, mb), out.narrow(0, mb, mb));
    ((l.real + l.fake) / static_cast<double>(k)).backward();
  }
  const auto dp = d->named_parameters(), tp = t.d()->named_parameters();
  for (const auto& p : dp) {  // D's gradients of its step
    const torch::Tensor want = p.value().grad(), got = tp[p.key()].grad();
    EXPECT_TRUE(torch::allclose(got, want, 1e-10, 1e-12)) << "D grad " << p.key();
  }
  {
    torch::NoGradGuard no_grad;
    for (const auto& p : dp) p.value().copy_(tp[p.key()]);  // D after its Adam step
  }
  for (auto& p : d->parameters()) p.requires_grad_(false);
  for (int64_t a = 0; a < k; ++a) {
    const torch::Tensor out = d->forward(fakes[a], zy[a].second).to(torch::kFloat);
    torch::Tensor out_real;
    if (loss == GanLoss::Relativistic) {
      d->eval();
      out_real = d->forward(real.images, real.labels).to(torch::kFloat);
      d->train();
    }
    (g_loss(loss, out, out_real) / static_cast<double>(k)).backward();
  }
  const auto gp = g->named_parameters(), tg = t.g()->named_parameters();
  ASSERT_GT(gp.size(), 10u);
  for (const auto& p : gp) {
    const torch::Tensor want = p.value().grad(), got = tg[p.key()].grad();
    ASSERT_TRUE(want.defined() && got.defined()) << p.key();
    EXPECT_TRUE(torch::allclose(got, want, 1e-10, 1e-12)) << "G grad " << p.key();
  }
  torch::set_default_dtype(caffe2::TypeMeta::Make<float>());
}

INSTANTIATE_TEST_SUITE_P(Losses, ReuseFake, ::testing::Values(GanLoss::Hinge, GanLoss::Relativistic),
                         [](const auto& p) { return word_of(p.param, kLossWords); });

// RpGAN without reuse_fake, n_dis 2: G's step draws fresh fakes and pairs them with the last D
// step's reals. Reference: D exactly as the trainer left it (weights and spectral-norm vectors,
// so eval mode gives the fakes' forward its sigma), G's starting weights from a twin trainer.
// Normal init, for spectral norms that move with each power iteration (see ReuseFake).
TEST(Losses, RelativisticPairsFreshFakesWithTheLastDStepsReals) {
  torch::set_default_dtype(caffe2::TypeMeta::Make<double>());
  const Config cfg = tiny(
      "train.loss=rpgan train.n_dis=2 train.reuse_fake=false train.accumulate=1 train.amp=false "
      "train.channels_last=false train.seed=4 model.init=normal");
  const StepInputs in = step_inputs(cfg, 3, cfg.train.batch_size, 5);
  const auto& zy = in.zy;
  const Batch& real = in.real;
  FixedSource src(real);

  Trainer t(cfg, torch::kCPU), ref(cfg, torch::kCPU);
  size_t draws = 0;
  script_latents(t, [&](int64_t) { return zy.at(draws++); });
  t.step(src);
  ASSERT_EQ(draws, 3u) << "one draw per D step, one for G's";

  Discriminator& d = ref.d();
  load_state_dict(*d, state_dict(*t.d()), "the trainer's D");
  for (auto& p : d->parameters()) p.requires_grad_(false);
  {
    torch::NoGradGuard no_grad;  // the D steps' G forwards: G's own spectral norms move with them
    for (int i = 0; i < 2; ++i) ref.g()->forward(zy[i].first, zy[i].second);
  }
  d->eval();
  const torch::Tensor out_real = d->forward(real.images, real.labels).to(torch::kFloat);  // fp32, as the trainer's
  const torch::Tensor out = d->forward(ref.g()->forward(zy[2].first, zy[2].second), zy[2].second).to(torch::kFloat);
  g_loss(GanLoss::Relativistic, out, out_real).backward();
  const auto tg = t.g()->named_parameters();
  size_t checked = 0;
  for (const auto& p : ref.g()->named_parameters()) {
    const torch::Tensor want = p.value().grad(), got = tg[p.key()].grad();
    ASSERT_TRUE(want.defined() && got.defined()) << p.key();
    EXPECT_TRUE(torch::allclose(got, want, 1e-10, 1e-12)) << "G grad " << p.key();
    ++checked;
  }
  EXPECT_GT(checked, 10u);
  torch::set_default_dtype(caffe2::TypeMeta::Make<float>());
}

TEST(ReuseFakeConfig, NeedsOneDStepPerIteration) {
  const std::string e = error_of([] { tiny("train.n_dis=2 train.reuse_fake=true"); });
  EXPECT_NE(e.find("reuse_fake"), std::string::npos) << e;
  EXPECT_NE(e.find("n_dis 2"), std::string::npos) << e;
}

// Fake labels in runs of one class (train.class_group): one uniform draw per run, repeated;
// run 1 is the per-image draw itself, so runs without class groups keep their stream.
TEST(FakeLabels, OneDrawPerRunOfOneClass) {
  auto a = at::detail::createCPUGenerator(11), b = at::detail::createCPUGenerator(11);
  const torch::Tensor y = draw_fake_labels(12, 10, 4, a);
  const torch::Tensor per_run = torch::randint(10, {3}, b, torch::kLong);
  EXPECT_TRUE(torch::equal(y, per_run.repeat_interleave(4)));
  auto c = at::detail::createCPUGenerator(11), d = at::detail::createCPUGenerator(11);
  EXPECT_TRUE(torch::equal(draw_fake_labels(12, 10, 1, c), torch::randint(10, {12}, d, torch::kLong)));
  EXPECT_NE(error_of([&] { draw_fake_labels(10, 10, 4, c); }).find("expected a multiple"), std::string::npos);
}

}  // namespace test_train
