// `hamgan train --nproc 2` over Gloo on loopback: a short 2-process run writes one
// checkpoint (rank 0 only) that a 1-process run then resumes; a rank killed with kill -9 is
// named by the survivor; scoring while training samples on both ranks. Runs the built binary.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gan/eval/score_table.h"
#include "io/png.h"
#include "support/process.h"
#include "support/random_classifier.h"

namespace test_train_multiprocess {

namespace fs = std::filesystem;

namespace {

// Runs a shell command, returns (exit status, stdout+stderr).
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

TEST(TrainMultiprocess, TwoProcessCheckpointResumesInOneProcess) {
  const fs::path dir = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "multiprocess_run";
  fs::remove_all(dir);
  const std::string base = hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan train --synthetic -c " +
                           hamgan::test::ctest_env("HAMGAN_SOURCE_DIR") + "/configs/fmnist32_sagan.yaml --out " +
                           dir.string() +
                           " generator.ch=4 discriminator.ch=4 train.batch_size=4"
                           " train.log_every=1 train.sample_every=0 train.checkpoint_every=2";
  const auto [rc2, out2] = run(base + " train.iterations=2 --nproc 2");
  ASSERT_EQ(rc2, 0) << out2;
  std::vector<std::string> ckpts;
  for (const auto& e : fs::directory_iterator(dir / "checkpoints")) ckpts.push_back(e.path().filename());
  ASSERT_EQ(ckpts.size(), 1u) << out2;
  EXPECT_EQ(ckpts[0], "ckpt_000000002.pt");
  EXPECT_NE(out2.find("finished at iteration 2"), std::string::npos) << out2;
  // Ranks that meet at once print nothing about waiting: a normal start must not read as a stall.
  EXPECT_EQ(out2.find("waiting"), std::string::npos) << out2;

  const auto [rc1, out1] = run(base + " train.iterations=3");
  ASSERT_EQ(rc1, 0) << out1;
  EXPECT_NE(out1.find("resuming from"), std::string::npos) << out1;
  EXPECT_NE(out1.find("(iteration 2)"), std::string::npos) << out1;
  EXPECT_NE(out1.find("finished at iteration 3"), std::string::npos) << out1;
}

// A rank killed with kill -9: the survivor says that a rank is gone and which checkpoint is
// kept, not only Gloo's "Connection reset by peer".
TEST(TrainMultiprocess, AKilledRankIsNamedWithTheCheckpointKept) {
  const fs::path dir = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "multiprocess_kill";
  fs::remove_all(dir);
  const std::string log = dir.string() + ".log";
  const pid_t launcher = hamgan::test::spawn(
      {hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan", "train", "--synthetic", "-c", hamgan::test::ctest_env("HAMGAN_SOURCE_DIR") + "/configs/fmnist32_sagan.yaml",
       "--out", dir.string(), "--nproc", "2", "generator.ch=4", "discriminator.ch=4", "train.batch_size=4",
       "train.log_every=1", "train.sample_every=0", "train.checkpoint_every=2", "train.iterations=100000"},
      {}, log);
  hamgan::test::ChildGuard guard(launcher);
  const std::string ck = (dir / "checkpoints" / "ckpt_000000002.pt").string();
  for (int i = 0; i < 1200 && !fs::exists(ck); ++i) usleep(100000);
  ASSERT_TRUE(fs::exists(ck)) << hamgan::test::read_text(log);
  const pid_t rank1 = hamgan::test::find_process({"RANK=1", "HAMGAN_LAUNCHER_PID=" + std::to_string(launcher)});
  ASSERT_GT(rank1, 0);
  kill(rank1, SIGKILL);
  const int status = hamgan::test::wait_for(launcher, 120);
  guard.release();
  const std::string out = hamgan::test::read_text(log);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_NE(WEXITSTATUS(status), 0) << out;
  EXPECT_NE(out.find("rank 0 of 2 lost the other ranks"), std::string::npos) << out;
  EXPECT_NE(out.find("is kept: run again to resume from it"), std::string::npos) << out;
  EXPECT_NE(out.find("worker 1 (rank 1 of 2) was killed by signal 9"), std::string::npos) << out;
}

// HAMGAN_LAUNCHER_PID naming a process that is gone (a rank whose launcher has exited, or the
// variable copied into another shell): an error naming it, not a silent exit 1.
TEST(TrainMultiprocess, AStaleLauncherPidIsNamed) {
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  int st = 0;
  ASSERT_EQ(waitpid(gone, &st, 0), gone);
  const fs::path dir = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "multiprocess_stale_launcher";
  fs::remove_all(dir);
  const std::string log = dir.string() + ".log";
  const pid_t pid = hamgan::test::spawn(
      {hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan", "train", "--synthetic", "-c", hamgan::test::ctest_env("HAMGAN_SOURCE_DIR") + "/configs/fmnist32_sagan.yaml",
       "--out", dir.string(), "--threads", "1", "generator.ch=4", "discriminator.ch=4", "train.iterations=1"},
      {"HAMGAN_LAUNCHER_PID=" + std::to_string(gone)}, log);
  hamgan::test::ChildGuard guard(pid);
  const int status = hamgan::test::wait_for(pid, 60);
  guard.release();
  const std::string out = hamgan::test::read_text(log);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("HAMGAN_LAUNCHER_PID='" + std::to_string(gone) + "'"), std::string::npos) << out;
  EXPECT_NE(out.find("that launcher is gone"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "checkpoints")) << out;
}

// Scoring while training on two ranks: each samples half of eval.n, and the scores equal those
// one process gives the same checkpoint (`fid --run`, the same latents). With
// HAMGAN_RENDEZVOUS_TIMEOUT=3 and scores that take longer than that, the rank that waits for
// rank 0's score (and for its reference, before training) waits untimed: the run finishes.
TEST(TrainMultiprocess, TwoRanksScoreTogetherAsOneRankWouldAndOutwaitTheTimeout) {
  const fs::path dir = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "multiprocess_score";
  fs::remove_all(dir);
  const std::string clf = hamgan::test::write_random_classifier(dir.string() + "_clf.pt", 10);
  const fs::path real = dir.string() + "_real";  // 10 classes of 2 gray noise images, as --synthetic's
  fs::remove_all(real);
  torch::manual_seed(3);
  for (int c = 0; c < 10; ++c) {
    fs::create_directories(real / std::to_string(c));
    for (int k = 0; k < 2; ++k)
      hamgan::write_png((real / std::to_string(c) / (std::to_string(k) + ".png")).string(),
                        torch::randint(0, 256, {32, 32, 1}, torch::kLong).to(torch::kUInt8));
  }
  const std::string metrics = "fid,precision,recall,class_acc";
  const std::string cmd = "HAMGAN_RENDEZVOUS_TIMEOUT=3 " + hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan train --synthetic -c " +
                          hamgan::test::ctest_env("HAMGAN_SOURCE_DIR") + "/configs/fmnist32_sagan.yaml --out " + dir.string() +
                          " --nproc 2 generator.ch=4 discriminator.ch=4 train.batch_size=4 train.iterations=2"
                          " train.sample_every=0 train.checkpoint_every=2 eval.every=2 eval.n=8000 eval.features=" +
                          clf + " eval.real=" + real.string() + " eval.metrics=" + metrics;
  const auto [rc, out] = run(cmd);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("finished at iteration 2"), std::string::npos) << out;
  const std::vector<hamgan::eval::ScoreRow> rows = hamgan::eval::read_run_scores(dir.string());
  ASSERT_EQ(rows.size(), 1u) << out;
  // The test means something only where a score outlasts the timeout.
  EXPECT_GT(rows[0].seconds, 3.0) << "the score took " << rows[0].seconds
                                  << " s, within the 3 s timeout: raise eval.n\n" << out;

  // One process scores a copy of the checkpoint with the same settings (the scorer's batch of 64).
  const fs::path one = dir.string() + "_one_rank";
  fs::remove_all(one);
  fs::create_directories(one / "checkpoints");
  fs::copy_file(dir / "checkpoints" / "ckpt_000000002.pt", one / "checkpoints" / "ckpt_000000002.pt");
  const auto [rc1, out1] = run(hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan fid --run " + one.string() + " --real " +
                               real.string() + " --features " + clf + " -n 8000 --batch 64 --metrics " + metrics);
  ASSERT_EQ(rc1, 0) << out1;
  const std::vector<hamgan::eval::ScoreRow> alone = hamgan::eval::read_run_scores(one.string());
  ASSERT_EQ(alone.size(), 1u) << out1;
  EXPECT_EQ(alone[0].iteration, 2);
  EXPECT_EQ(alone[0].n, rows[0].n);
  for (const char* m : {"fid", "precision", "recall", "class_acc"}) {
    ASSERT_TRUE(rows[0].values.count(m)) << m;
    EXPECT_EQ(rows[0].values.at(m), alone[0].values.at(m)) << m << "\n" << out << out1;
  }
}

// `--nproc 2` on a run another process trains: one error naming the holder, from the launcher,
// before any rank starts (not rank 0's refusal beside rank 1's process-group text).
TEST(TrainMultiprocess, ABusyRunIsRefusedOnceByTheLauncher) {
  const fs::path dir = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "multiprocess_busy";
  fs::remove_all(dir);
  const std::vector<std::string> args = {hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan", "train", "--synthetic", "-c",
                                         hamgan::test::ctest_env("HAMGAN_SOURCE_DIR") + "/configs/fmnist32_sagan.yaml", "--out",
                                         dir.string(), "--threads", "1", "generator.ch=4", "discriminator.ch=4",
                                         "train.batch_size=4", "train.iterations=100000", "train.sample_every=0"};
  const pid_t holder = hamgan::test::spawn(args, {}, dir.string() + "_holder.log");
  hamgan::test::ChildGuard guard(holder);
  for (int i = 0; i < 600 && !fs::exists(dir / "config.yaml"); ++i) usleep(100000);
  ASSERT_TRUE(fs::exists(dir / "config.yaml")) << hamgan::test::read_text(dir.string() + "_holder.log");
  std::string cmd;
  for (const auto& a : args) cmd += "'" + a + "' ";
  const auto [rc, out] = run(cmd + "--nproc 2");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("in use by another hamgan process (PID " + std::to_string(holder)), std::string::npos) << out;
  EXPECT_EQ(out.find("rank"), std::string::npos) << out;  // no rank started
}

}  // namespace test_train_multiprocess
