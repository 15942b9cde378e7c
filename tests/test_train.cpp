// The trainer: losses against hand-computed values (plus gradcheck), the EMA update,
// checkpoints (round trip, atomic write, corrupt newest, model-changing config rejected),
// exact CPU resume (2N straight vs N + resume + N, bit for bit), NaN stop and SIGINT stop.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
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
#include "gan/train/metrics_plot.h"
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

struct Ran : TrainResult {
  std::vector<IterStats> history;  // every iteration of this call
};

Ran run(const Config& cfg, const std::string& dir, TrainHooks hooks = {}) {
  std::ostringstream sink;
  TrainOptions opt;
  opt.out_dir = dir;
  opt.out = &sink;
  Ran r;
  hooks.history = &r.history;
  static_cast<TrainResult&>(r) = train(cfg, opt, synthetic(cfg), hooks);
  return r;
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
  // The disk fills up 1000 bytes into the write: the save fails, naming the file, and leaves
  // no partial temporary behind (it would keep the disk full) ...
  io::inject_write_failure(ENOSPC, 1000);
  try {
    t.save(checkpoint_path(dir, 2), src->state());
    ADD_FAILURE() << "expected a write error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(checkpoint_path(dir, 2)), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
  }
  io::inject_write_failure(0);
  for (const auto& f : fs::directory_iterator(dir))
    EXPECT_EQ(f.path().filename().string().find(".tmp"), std::string::npos) << f.path();
  // ... and a half-written temporary of a crashed save is not a checkpoint either.
  std::ofstream(checkpoint_path(dir, 3) + ".tmp") << "PK half a zip";
  std::ofstream(io::temporary_name(checkpoint_path(dir, 3))) << "PK half a zip";
  ASSERT_EQ(list_checkpoints(dir).size(), 1u);
  std::ostringstream warn;
  auto c = load_latest_checkpoint(dir, warn);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->iteration, 1);
  EXPECT_EQ(warn.str(), "");
}

TEST(Checkpoint, PruneKeepsNewest) {
  const std::string dir = fresh_dir("prune");
  run(tiny("train.checkpoint_every=1 train.keep_checkpoints=2 train.iterations=3"), dir);
  const std::string ck = dir + "/checkpoints";
  EXPECT_EQ(list_checkpoints(ck), (std::vector<std::string>{checkpoint_path(ck, 3), checkpoint_path(ck, 2)}));
  run(tiny("train.checkpoint_every=1 train.keep_checkpoints=2 train.iterations=5"), dir);
  EXPECT_EQ(list_checkpoints(ck), (std::vector<std::string>{checkpoint_path(ck, 5), checkpoint_path(ck, 4)}));
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
  const Ran r = run(cfg, dir);
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
  const Ran straight = run(tiny(), a);
  const Ran first = run(tiny("train.iterations=3 train.checkpoint_every=0"), b);
  const Ran second = run(tiny(), b);
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

namespace {
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

TEST(Stop, SigintFinishesTheStepCheckpointsAndReturns) {
  const std::string dir = fresh_dir("sigint");
  TrainHooks hooks;
  hooks.after_step = [](Trainer& t) {
    if (t.iteration() == 2) std::raise(SIGINT);
  };
  const Ran r = run(tiny(), dir, hooks);
  EXPECT_EQ(r.outcome, TrainOutcome::Interrupted);
  EXPECT_EQ(r.iteration, 2);
  EXPECT_EQ(load_checkpoint(checkpoint_path(dir + "/checkpoints", 2)).iteration, 2);
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);  // the previous handler is back
  // The run continues where it stopped.
  EXPECT_EQ(run(tiny(), dir).history.size(), 4u);
}

// ---- Issue 13: defects found by probing ----

namespace {

// Flips 4 bytes in the middle of the first tensor record (archive/data/*) of a checkpoint,
// as a bad disk or a careless edit would; the zip structure stays intact.
void flip_tensor_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = 0;
  io::for_each_zip_member(b, path, 1 << 20, [&](const std::string& name, const uint8_t* p, size_t n) {
    if (!at && name.find("/data/") != std::string::npos && n >= 16) at = static_cast<size_t>(p - b.data()) + n / 2;
  });
  ASSERT_GT(at, 0u) << "no tensor record in " << path;
  for (size_t k = 0; k < 4; ++k) b[at + k] ^= 0x5a;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

// 13.1: a checkpoint whose tensor bytes changed is refused naming the file and the record, and
// resume treats it like a truncated one: a warning, then the previous valid checkpoint.
TEST(Checkpoint, FlippedTensorBytesAreDetectedAndResumeFallsBack) {
  const Config cfg = tiny();
  const std::string dir = fresh_dir("flipped");
  run(cfg, dir);  // checkpoints at 3 and 6
  const std::string ckdir = dir + "/checkpoints", newest = checkpoint_path(ckdir, 6);
  flip_tensor_bytes(newest);
  try {
    load_checkpoint(newest);
    FAIL() << "a damaged checkpoint loaded";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(newest), std::string::npos) << m;
    EXPECT_NE(m.find("CRC mismatch"), std::string::npos) << m;
    EXPECT_NE(m.find("/data/"), std::string::npos) << m;
  }
  std::ostringstream sink;
  TrainOptions opt;
  opt.out_dir = dir;
  opt.out = &sink;
  std::vector<IterStats> history;
  TrainHooks hooks;
  hooks.history = &history;
  train(tiny("train.iterations=8"), opt, synthetic(cfg), hooks);
  const std::string log = sink.str();
  EXPECT_NE(log.find("warning: skipping damaged checkpoint"), std::string::npos) << log;
  EXPECT_NE(log.find(newest), std::string::npos) << log;
  EXPECT_NE(log.find("resuming from " + checkpoint_path(ckdir, 3)), std::string::npos) << log;
  EXPECT_EQ(history.size(), 5u);  // iterations 4..8, all finite
  for (const auto& st : history)
    for (float v : st) EXPECT_TRUE(std::isfinite(v));
}

// 13.2: the disk fills up during a run: train fails naming the file, leaves no temporary, and
// every checkpoint it had written still loads; the next run resumes from the newest.
TEST(Checkpoint, FullDiskDuringTrainingFailsAndLosesNothing) {
  const std::string dir = fresh_dir("fulldisk");
  run(tiny("train.iterations=3"), dir);
  TrainHooks hooks;
  hooks.after_step = [](Trainer& t) {
    if (t.iteration() == 5) io::inject_write_failure(ENOSPC, 4096);
  };
  EXPECT_THROW(run(tiny(), dir, hooks), Error);
  io::inject_write_failure(0);
  for (const auto& sub : {"", "/checkpoints", "/samples"}) {
    for (const auto& f : fs::directory_iterator(dir + sub)) {
      EXPECT_FALSE(io::is_temporary_name(f.path().filename().string())) << f.path();
      if (f.is_regular_file() && f.path().extension() != ".lock") {
        EXPECT_GT(fs::file_size(f.path()), 0u) << f.path();
      }
    }
  }
  const auto all = list_checkpoints(dir + "/checkpoints");
  ASSERT_FALSE(all.empty());
  for (const auto& c : all) EXPECT_NO_THROW(load_checkpoint(c)) << c;
  EXPECT_EQ(run(tiny(), dir).history.size(), 3u);  // 3 -> 6
}

// 13.3: a second process on the same --out fails at once, naming the holder's PID; the run
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

// 13.6: a file named like a checkpoint with an iteration beyond int64 is reported and skipped,
// never an unexplained `stoll`.
TEST(Checkpoint, OutOfRangeCheckpointNameIsSkippedWithAWarning) {
  const std::string dir = fresh_dir("stoll");
  run(tiny("train.iterations=3"), dir);
  const std::string odd = dir + "/checkpoints/ckpt_99999999999999999999.pt";
  std::ofstream(odd) << "x";
  std::ostringstream warn;
  const auto c = load_latest_checkpoint(dir + "/checkpoints", warn);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->iteration, 3);
  EXPECT_NE(warn.str().find(odd), std::string::npos) << warn.str();
  EXPECT_NE(warn.str().find("out of range"), std::string::npos) << warn.str();
  EXPECT_EQ(run(tiny(), dir).history.size(), 3u);
}

// 13.6: divergence before any checkpoint does not claim that one is kept.
TEST(Stop, NanBeforeAnyCheckpointSaysNoneWasWritten) {
  const std::string dir = fresh_dir("nan_first");
  const std::string m = divergence_error(dir, 1);
  ASSERT_FALSE(m.empty()) << "expected an error";
  EXPECT_NE(m.find("at iteration 2"), std::string::npos) << m;
  EXPECT_NE(m.find("no checkpoint was written"), std::string::npos) << m;
  EXPECT_EQ(m.find("is kept"), std::string::npos) << m;
  EXPECT_TRUE(list_checkpoints(dir + "/checkpoints").empty());
}

// 13.7: the EMA warm-up, d_n = min(decay, 0.5^(1 / (rampup n))) with n the updates so far,
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
  t.lr_decay = "linear";
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
  const auto log = read_metrics_jsonl(a + "/metrics.jsonl");
  ASSERT_EQ(log.size(), 6u);
  const double expected[] = {1, 1, 1, 1, 2.0 / 3, 1.0 / 3};
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(log[i].at("g_lr"), tiny().train.g_lr * expected[i], 1e-12) << "iteration " << i + 1;
    EXPECT_NEAR(log[i].at("d_lr"), tiny().train.d_lr * expected[i], 1e-12) << "iteration " << i + 1;
  }
  EXPECT_TRUE(identical(load_models(checkpoint_path(a + "/checkpoints", 6)).g,
                        load_models(checkpoint_path(b + "/checkpoints", 6)).g));
}

// 13.7: standing statistics equal the BN statistics averaged by hand: each batch's statistics
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

// 13.7: the trainer stores standing statistics with the EMA G (flagged), sampling a checkpoint
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
