// Which checkpoints a run keeps, resumes from and scores (gan/checkpoint/checkpoint.h,
// gan/train/run_dir.h, gan/eval/score_run.h): pruning and resume decide by what a checkpoint
// verifiably holds, an unreadable file stops the run, one scorer per run at a time, and a
// checkpoint pruned while it is scored is not called damaged.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "gan/checkpoint/checkpoint.h"
#include "gan/eval/reference.h"
#include "gan/eval/score_run.h"
#include "io/dir_lock.h"
#include "metrics/feature_net.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/mean_net.h"
#include "support/process.h"
#include "support/tiny_checkpoint.h"
#include "support/tiny_run.h"

namespace test_checkpoint_retention {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

// An empty directory of this test, created.
std::string fresh(const std::string& name) { return test::created_dir("test_checkpoint_retention", name); }

using test::in_child;
using test::MeanNet;

// MeanNet that deletes `victim` the first time it sees images: a training run pruning the
// checkpoint `fid --run` is about to score.
struct PruningNet : MeanNet {
  std::string victim;
  mutable bool done = false;
  metrics::FeatureOutput features(const torch::Tensor& p, bool l) const override {
    if (!done) fs::remove(victim), done = true;
    return MeanNet::features(p, l);
  }
};

}  // namespace

// An empty newest checkpoint (`: > ckpt_000000999.pt`) appearing while a run trains does not
// count as kept: keep_checkpoints=1 never deletes the last good one for it. (One already there
// when a run starts is moved aside to .damaged at resume.)
TEST(CheckpointRetention, PruningNeverTradesAGoodCheckpointForADamagedOne) {
  const std::string dir = fresh("prune");
  test::run(test::tiny("train.iterations=3"), dir);
  const std::string junk = dir + "/checkpoints/ckpt_000000999.pt";
  TrainHooks hooks;
  hooks.after_step = [&junk](Trainer& t) {
    if (t.iteration() == 4) std::ofstream(junk).close();
  };
  const auto r =
      test::run(test::tiny("train.iterations=6 train.checkpoint_every=1 train.keep_checkpoints=1"), dir, hooks);
  EXPECT_EQ(r.iteration, 6);
  const auto names = list_checkpoints(dir + "/checkpoints");
  ASSERT_EQ(names.size(), 2u);  // the junk (left alone) and the newest good one
  EXPECT_EQ(names[0], junk);
  EXPECT_EQ(load_checkpoint(names[1]).iteration, 6);
  // A valid file under another iteration's name does not count either.
  fs::copy_file(names[1], dir + "/checkpoints/ckpt_000000500.pt");
  test::run(test::tiny("train.iterations=7 train.checkpoint_every=1 train.keep_checkpoints=1"), dir);
  EXPECT_EQ(load_checkpoint(checkpoint_path(dir + "/checkpoints", 7)).iteration, 7);
  EXPECT_EQ(fs::file_size(junk + ".damaged"), 0u) << "set aside at resume, never deleted";
}

// A newest checkpoint that cannot be opened (permissions, I/O) is not a damaged one: resume stops
// naming it, instead of resuming from an older one and overwriting it.
TEST(CheckpointRetention, AnUnreadableCheckpointStopsInsteadOfBeingSkipped) {
  const std::string dir = fresh("unreadable");
  test::run(test::tiny("train.iterations=6"), dir);  // checkpoints 3 and 6
  const std::string newest = checkpoint_path(dir + "/checkpoints", 6);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir + "/checkpoints", fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  ASSERT_EQ(chmod(newest.c_str(), 0), 0);
  const int rc = in_child([&] {
    std::ostringstream warn;
    const std::string e = test::error_of([&] { load_latest_checkpoint(dir + "/checkpoints", warn); });
    return e.find("cannot read this checkpoint") != std::string::npos && e.find(newest) != std::string::npos &&
                   warn.str().empty()
               ? 0 : 1;
  }, true);
  chmod(newest.c_str(), 0644);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(load_checkpoint(newest).iteration, 6);  // untouched
}

// Two `fid --run` on one run at once would append every row twice: the second is refused.
TEST(CheckpointRetention, OneScorerPerRunAtATime) {
  const std::string run = fresh("scorer");
  fs::create_directories(run + "/checkpoints");
  const io::DirLock other(run, ".fid.lock");
  eval::RunScoreOptions o;
  o.run_dir = run;
  const std::string e = test::error_of([&] { eval::score_run(o, eval::Reference{}, MeanNet{}, std::cerr); });
  EXPECT_NE(e.find("in use by another hamgan process"), std::string::npos) << e;
  EXPECT_NE(e.find(".fid.lock"), std::string::npos) << e;
  const io::DirLock training(run);  // training's own lock is another file: scoring a run while it trains
}

// `fid --run` while `train` prunes the run: a checkpoint deleted before it was scored is said
// so, not reported as damaged.
TEST(CheckpointRetention, ACheckpointPrunedWhileScoringIsNotDamaged) {
  const std::string run = fresh("pruned_run");
  fs::create_directories(run + "/checkpoints");
  for (int64_t it : {10, 20}) test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", it), it, true, 1,
                                                          test::tiny_checkpoint_yaml());
  PruningNet net;
  net.victim = checkpoint_path(run + "/checkpoints", 20);
  eval::Reference ref;
  ref.stats.mu = torch::zeros({1}, torch::kDouble);
  ref.stats.sigma = torch::eye(1, torch::kDouble);
  ref.no_kid_why = "no real features";
  eval::RunScoreOptions o;
  o.run_dir = run;
  o.n = 4;
  std::ostringstream log;
  std::vector<std::string> damaged;
  const auto rows = eval::score_run(o, ref, net, log, &damaged);
  EXPECT_EQ(rows.size(), 1u);
  EXPECT_TRUE(damaged.empty()) << log.str();
  EXPECT_NE(log.str().find("was deleted before it was scored (pruned by training?)"), std::string::npos) << log.str();
}

}  // namespace test_checkpoint_retention
