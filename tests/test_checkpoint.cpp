// Checkpoints: a round trip restores everything, writes are atomic, pruning keeps the newest,
// damaged files (truncated, flipped bytes, out-of-range names) fall back to the previous one,
// a full disk loses nothing, and a model-changing config cannot resume.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/state_dict.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/train/train_hooks.h"
#include "gan/train/trainer.h"
#include "io/atomic_file.h"
#include "io/zip_reader.h"
#include "support/state_dicts.h"
#include "support/tiny_run.h"

namespace test_checkpoint {

using namespace hamgan;
using namespace hamgan::test;
namespace fs = std::filesystem;

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

namespace {
std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace

// A damaged checkpoint skipped on resume is moved aside (never deleted), the log says where,
// and the run that trains past its iteration again writes a fresh file under the name without
// replacing it; a second damaged file of that name goes to .damaged.2.
TEST(Checkpoint, DamagedCheckpointIsMovedAsideAndNeverReplaced) {
  const Config cfg = tiny();
  const std::string dir = fresh_dir("damaged_aside");
  run(cfg, dir);  // checkpoints at 3 and 6
  const std::string ckdir = dir + "/checkpoints", newest = checkpoint_path(ckdir, 6);
  fs::resize_file(newest, fs::file_size(newest) / 2);
  const std::string damaged = bytes_of(newest);
  const Ran r = run(cfg, dir);
  EXPECT_NE(r.log.find("warning: skipping damaged checkpoint (falling back to the previous one): " + newest),
            std::string::npos) << r.log;
  EXPECT_NE(r.log.find("moved it to " + newest + ".damaged "), std::string::npos) << r.log;
  EXPECT_EQ(r.history.size(), 3u);  // 4..6
  ASSERT_TRUE(fs::exists(newest + ".damaged"));
  EXPECT_EQ(bytes_of(newest + ".damaged"), damaged) << "the damaged file is kept as it was";
  EXPECT_EQ(load_checkpoint(newest).iteration, 6) << "the new checkpoint 6 is a fresh, valid one";
  EXPECT_EQ(list_checkpoints(ckdir), (std::vector<std::string>{newest, checkpoint_path(ckdir, 3)}));

  flip_tensor_bytes(newest);
  const std::string second = bytes_of(newest);
  const Ran again = run(cfg, dir);
  EXPECT_NE(again.log.find("moved it to " + newest + ".damaged.2 "), std::string::npos) << again.log;
  EXPECT_EQ(bytes_of(newest + ".damaged"), damaged);
  EXPECT_EQ(bytes_of(newest + ".damaged.2"), second);
}

// The only checkpoint is damaged: the warning says the run starts from iteration 0 (there is no
// previous one to fall back to), the file is moved aside, and the new checkpoint 3 leaves it be.
TEST(Checkpoint, OnlyCheckpointDamagedRestartsFromZeroAndKeepsIt) {
  const Config cfg = tiny("train.iterations=3");
  const std::string dir = fresh_dir("damaged_only");
  run(cfg, dir);
  const std::string only = checkpoint_path(dir + "/checkpoints", 3);
  fs::resize_file(only, fs::file_size(only) / 2);
  const std::string damaged = bytes_of(only);
  const Ran r = run(cfg, dir);
  EXPECT_NE(r.log.find("warning: skipping damaged checkpoint (no valid checkpoint before it: the run starts from "
                       "iteration 0): " + only),
            std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("falling back to the previous one"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("moved it to " + only + ".damaged "), std::string::npos) << r.log;
  EXPECT_EQ(r.history.size(), 3u);  // 1..3
  EXPECT_EQ(bytes_of(only + ".damaged"), damaged);
  EXPECT_EQ(load_checkpoint(only).iteration, 3);
}

TEST(Checkpoint, ModelChangingConfigOnResumeIsRejected) {
  const std::string dir = fresh_dir("cfgchange");
  run(tiny("train.iterations=3"), dir);
  try {
    run(tiny("generator.ch=8"), dir);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("generator.ch: checkpoint 4, now 8"), std::string::npos) << e.what();
  }
  // Every differing key is named, and the run's config.yaml as what to resume with.
  try {
    run(tiny("model.n_classes=4 discriminator.ch=8"), dir);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("in 2 keys"), std::string::npos) << w;
    EXPECT_NE(w.find("model.n_classes: checkpoint 3, now 4"), std::string::npos) << w;
    EXPECT_NE(w.find("discriminator.ch: checkpoint 4, now 8"), std::string::npos) << w;
    EXPECT_NE(w.find("-c " + dir + "/config.yaml"), std::string::npos) << w;
  }
  // A safe change (more iterations, another log interval) resumes.
  EXPECT_EQ(run(tiny("train.iterations=4 train.log_every=2"), dir).iteration, 4);
}

// A checkpoint whose tensor bytes changed is refused naming the file and the record, and
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
  expect_resumed_past_damaged(run(tiny("train.iterations=8"), dir), newest, checkpoint_path(ckdir, 3), 5);  // 4..8
}

// The disk fills up during a run: train fails naming the file, leaves no temporary, and
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

// A file named like a checkpoint with an iteration beyond int64 is reported and skipped,
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

}  // namespace test_checkpoint
