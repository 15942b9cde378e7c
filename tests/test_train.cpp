// The trainer: losses against hand-computed values (plus gradcheck), the EMA update,
// checkpoints (round trip, atomic write, corrupt newest, model-changing config rejected),
// exact CPU resume (2N straight vs N + resume + N, bit for bit), NaN stop and SIGINT stop.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/state_dict.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/data/synthetic.h"
#include "gan/train/ema.h"
#include "gan/train/losses.h"
#include "gan/train/metrics_plot.h"
#include "gan/train/trainer.h"
#include "io/decode.h"
#include "io/image.h"
#include "support/gradcheck.h"
#include "support/state_dicts.h"

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

double softplus(double x) { return std::log1p(std::exp(x)); }

// A tiny SAGAN at 32x32 (attention in G and D); every code path of the step is exercised:
// n_dis 2, two accumulated micro-batches, EMA copying before iteration 2, averaging after.
Config tiny(const std::string& extra = "") {
  const std::string y =
      "model: {resolution: 32, n_classes: 3, image_channels: 1}\n"
      "generator: {ch: 4, z_dim: 8, context: {type: self_attention, resolution: 16}}\n"
      "discriminator: {ch: 4, context: {type: self_attention, resolution: 16}}\n"
      "train: {batch_size: 4, accumulate: 2, n_dis: 2, iterations: 6, ema_start: 2,\n"
      "        ema_decay: 0.9, log_every: 1, sample_every: 3, checkpoint_every: 3,\n"
      "        keep_checkpoints: 5, device: cpu}\n";
  std::vector<std::string> ov;
  std::istringstream is(extra);
  for (std::string o; is >> o;) ov.push_back(o);
  return parse_config(y, "tiny config", ov);
}

SourceFactory synthetic(const Config& cfg) {
  return [cfg](int64_t batch, LoaderState start) -> std::unique_ptr<BatchSource> {
    // 10 images with batch 2: five batches an epoch, so runs cross epoch boundaries.
    auto data = std::make_shared<SyntheticDataset>(10, cfg.model.resolution,
                                                   cfg.model.image_channels, cfg.model.n_classes, 7);
    return std::make_unique<DatasetSource>(data, batch, 11, start);
  };
}

std::string fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("hamgan_test_train_" + name);
  fs::remove_all(p);
  return p.string();
}

TrainResult run(const Config& cfg, const std::string& dir, TrainOptions opt = {}) {
  std::ostringstream sink;
  opt.out_dir = dir;
  opt.out = &sink;
  opt.record_history = true;
  return train(cfg, opt, synthetic(cfg));
}

using test::identical;

struct Loaded {
  TensorMap g, d, g_ema;
};
Loaded load_models(const std::string& path) {
  const CheckpointData c = load_checkpoint(path);
  Generator g(c.config.model, c.config.generator), ge(c.config.model, c.config.generator);
  Discriminator d(c.config.model, c.config.discriminator);
  c.load_module("g", *g);
  c.load_module("d", *d);
  c.load_module("g_ema", *ge);
  return {state_dict(*g), state_dict(*d), state_dict(*ge)};
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
  EXPECT_THROW(parse_gan_loss("wasserstein"), Error);
}

TEST(Losses, Gradcheck) {
  // Away from the hinge kinks (|1 -+ x| >= 0.5), where the gradient is defined.
  for (GanLoss t : {GanLoss::Hinge, GanLoss::NonSaturating}) {
    auto r = torch::tensor({2.0, 0.5, -1.0, 3.0}, torch::dtype(torch::kDouble).requires_grad(true));
    auto f = torch::tensor({-2.0, 0.3, 1.0, -0.5}, torch::dtype(torch::kDouble).requires_grad(true));
    EXPECT_TRUE(test::gradcheck([&] { const DLoss l = d_loss(t, r, f); return l.real + l.fake; }, {r, f}));
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

TEST(Checkpoint, RoundTripRestoresEverything) {
  const Config cfg = tiny();
  const std::string dir = fresh_dir("roundtrip");
  fs::create_directories(dir);
  Trainer a(cfg, torch::kCPU);
  auto src = synthetic(cfg)(a.micro_batch(), {});
  for (int i = 0; i < 3; ++i) a.step(*src);
  const std::string path = checkpoint_path(dir, a.iteration());
  a.save(path, src->state());

  const CheckpointData c = load_checkpoint(path);
  EXPECT_EQ(c.version, kCheckpointVersion);
  EXPECT_EQ(c.iteration, 3);
  EXPECT_EQ(c.loader.epoch, src->state().epoch);
  EXPECT_EQ(c.loader.batch_in_epoch, src->state().batch_in_epoch);
  EXPECT_EQ(to_yaml(c.config.resolved), to_yaml(cfg.resolved));
  Trainer b(cfg, torch::kCPU);
  b.restore(c);
  EXPECT_TRUE(identical(state_dict(*a.g()), state_dict(*b.g())));
  EXPECT_TRUE(identical(state_dict(*a.d()), state_dict(*b.d())));
  EXPECT_TRUE(identical(state_dict(**a.g_ema()), state_dict(**b.g_ema())));
  // The sampling/FID path: the EMA G rebuilt from the stored config alone.
  Generator ge = load_generator(c, /*ema=*/true);
  const auto z = torch::randn({6, 8}), y = torch::tensor({0, 1, 2, 0, 1, 2}, torch::kLong);
  torch::NoGradGuard ng;
  EXPECT_TRUE(torch::equal(ge->forward(z, y), a.sample(z, y)));
}

TEST(Checkpoint, FailedWriteLeavesPreviousIntact) {
  const Config cfg = tiny();
  const std::string dir = fresh_dir("atomic");
  fs::create_directories(dir);
  Trainer t(cfg, torch::kCPU);
  auto src = synthetic(cfg)(t.micro_batch(), {});
  t.step(*src);
  t.save(checkpoint_path(dir, 1), src->state());
  t.step(*src);
  // The temporary cannot be created (a directory is in the way): the save fails ...
  fs::create_directories(checkpoint_path(dir, 2) + ".tmp");
  EXPECT_THROW(t.save(checkpoint_path(dir, 2), src->state()), Error);
  // ... and a half-written temporary of a crashed save is not a checkpoint either.
  std::ofstream(checkpoint_path(dir, 3) + ".tmp") << "PK half a zip";
  ASSERT_EQ(list_checkpoints(dir).size(), 1u);
  fs::remove_all(checkpoint_path(dir, 2) + ".tmp");
  std::ostringstream warn;
  auto c = load_latest_checkpoint(dir, warn);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->iteration, 1);
  EXPECT_EQ(warn.str(), "");
}

TEST(Checkpoint, PruneKeepsNewestAndBest) {
  const std::string dir = fresh_dir("prune");
  run(tiny("train.checkpoint_every=1 train.keep_checkpoints=2 train.iterations=3"), dir);
  const std::string ck = dir + "/checkpoints";
  EXPECT_EQ(list_checkpoints(ck), (std::vector<std::string>{checkpoint_path(ck, 3), checkpoint_path(ck, 2)}));
  EXPECT_EQ(mark_best(checkpoint_path(ck, 2)), checkpoint_path(ck, 2, true));
  run(tiny("train.checkpoint_every=1 train.keep_checkpoints=2 train.iterations=5"), dir);
  EXPECT_EQ(list_checkpoints(ck), (std::vector<std::string>{checkpoint_path(ck, 5), checkpoint_path(ck, 4),
                                                            checkpoint_path(ck, 2, true)}));
}

TEST(Checkpoint, CorruptNewestFallsBackToPrevious) {
  const Config cfg = tiny();
  const std::string dir = fresh_dir("corrupt");
  run(cfg, dir);  // checkpoints at 3 and 6
  const std::string ckdir = dir + "/checkpoints", newest = checkpoint_path(ckdir, 6);
  ASSERT_EQ(list_checkpoints(ckdir).front(), newest);
  fs::resize_file(newest, fs::file_size(newest) / 2);
  std::ostringstream warn;
  auto c = load_latest_checkpoint(ckdir, warn);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->iteration, 3);
  EXPECT_NE(warn.str().find(newest), std::string::npos) << warn.str();
  // Training resumes from the older one and reaches the end again.
  const TrainResult r = run(cfg, dir);
  EXPECT_EQ(r.history.size(), 3u);
  EXPECT_EQ(r.iteration, 6);
}

TEST(Checkpoint, ModelChangingConfigOnResumeIsRejected) {
  const std::string dir = fresh_dir("cfgchange");
  run(tiny("train.iterations=3"), dir);
  try {
    run(tiny("generator.ch=8"), dir);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'generator' section"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run(tiny("model.n_classes=4"), dir), Error);
  // A safe change (more iterations, another log interval) resumes.
  EXPECT_EQ(run(tiny("train.iterations=4 train.log_every=2"), dir).iteration, 4);
}

TEST(Resume, TwoNStraightEqualsNPlusResumePlusNBitForBit) {
  const std::string a = fresh_dir("straight"), b = fresh_dir("resumed");
  const TrainResult straight = run(tiny(), a);
  const TrainResult first = run(tiny("train.iterations=3 train.checkpoint_every=0"), b);
  const TrainResult second = run(tiny(), b);
  ASSERT_EQ(straight.history.size(), 6u);
  ASSERT_EQ(first.history.size(), 3u);
  ASSERT_EQ(second.history.size(), 3u);
  for (size_t i = 0; i < 6; ++i) {
    const IterStats& r = i < 3 ? first.history[i] : second.history[i - 3];
    for (int j = 0; j < kNumStats; ++j)
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
  EXPECT_EQ(read_metrics_jsonl(b + "/metrics.jsonl").size(), 6u);
}

TEST(Stop, NanLossStopsNamingTheIterationAndKeepsLastCheckpoint) {
  const std::string dir = fresh_dir("nan");
  TrainOptions opt;
  opt.after_step = [](Trainer& t) {
    if (t.iteration() != 4) return;
    torch::NoGradGuard ng;
    for (auto& p : t.d()->parameters()) p.fill_(std::nanf(""));
  };
  try {
    run(tiny(), dir, opt);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("at iteration 5"), std::string::npos) << m;
    EXPECT_NE(m.find("nan"), std::string::npos) << m;
  }
  const auto all = list_checkpoints(dir + "/checkpoints");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], checkpoint_path(dir + "/checkpoints", 3));
  EXPECT_EQ(load_checkpoint(all[0]).iteration, 3);
}

TEST(Stop, SigintFinishesTheStepCheckpointsAndReturns) {
  const std::string dir = fresh_dir("sigint");
  TrainOptions opt;
  opt.after_step = [](Trainer& t) {
    if (t.iteration() == 2) std::raise(SIGINT);
  };
  const TrainResult r = run(tiny(), dir, opt);
  EXPECT_EQ(r.outcome, TrainOutcome::Interrupted);
  EXPECT_EQ(r.iteration, 2);
  EXPECT_EQ(load_checkpoint(checkpoint_path(dir + "/checkpoints", 2)).iteration, 2);
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);  // the previous handler is back
  // The run continues where it stopped.
  EXPECT_EQ(run(tiny(), dir).history.size(), 4u);
}
