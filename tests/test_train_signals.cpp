// SIGTERM and SIGINT to the real `hamgan train` (checkpoints and resume): the run
// finishes its step, writes a checkpoint, says so and exits 0; a second run resumes from
// that iteration. Each child is bounded in time and killed if the test fails.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <regex>
#include <thread>

#include "gan/checkpoint/checkpoint.h"
#include "support/process.h"

namespace test_train_signals {

namespace fs = std::filesystem;
using namespace hamgan;

namespace {

std::vector<std::string> train_args(const fs::path& out, int64_t iterations) {
  return {hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan", "train", "--synthetic", "--threads", "1",
          "-c", hamgan::test::ctest_env("HAMGAN_SOURCE_DIR") + "/configs/fmnist32_sagan.yaml", "--out", out.string(),
          "generator.ch=4", "discriminator.ch=4", "train.batch_size=4", "train.log_every=1",
          "train.sample_every=0", "train.checkpoint_every=0", "train.device=cpu",
          "train.iterations=" + std::to_string(iterations)};
}

int64_t metrics_lines(const fs::path& out) {
  const std::string s = test::read_text((out / "metrics.jsonl").string());
  return std::count(s.begin(), s.end(), '\n');
}

// Starts a long run, waits until metrics.jsonl has more than `after` lines (iterations
// done in this run), sends `sig`; returns the exit status (-1: timed out) and the output.
std::pair<int, std::string> train_then_signal(const fs::path& out, int sig, int64_t after,
                                              const std::string& log,
                                              const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = train_args(out, 1000000);
  args.insert(args.end(), extra.begin(), extra.end());
  test::ChildGuard child(test::spawn(args, {}, log));
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (metrics_lines(out) <= after && std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (waitpid(child.pid(), &status, WNOHANG) == child.pid()) {
      child.release();
      return {-2, test::read_text(log)};  // exited before making progress
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (metrics_lines(out) <= after) return {-1, "no progress in 60 s\n" + test::read_text(log)};
  kill(child.pid(), sig);
  const int status = test::wait_for(child.pid(), 60);
  child.release();
  return {status, test::read_text(log)};
}

int64_t stopped_iteration(const std::string& output, int sig) {
  std::smatch m;
  const std::regex re("stopped by signal " + std::to_string(sig) +
                      " after iteration ([0-9]+); checkpoint (\\S+)");
  if (!std::regex_search(output, m, re)) return -1;
  return std::stoll(m[1]);
}

}  // namespace

TEST(TrainSignals, SigtermCheckpointsThenResumeContinuesAndSigintDoesTheSame) {
  const fs::path out = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "signals_run";
  fs::remove_all(out);

  // SIGTERM after at least one iteration.
  const auto [st1, out1] = train_then_signal(out, SIGTERM, 0, (out.string() + "_1.log"));
  ASSERT_TRUE(st1 >= 0 && WIFEXITED(st1) && WEXITSTATUS(st1) == 128 + SIGTERM) << "status " << st1 << "\n" << out1;
  const int64_t it1 = stopped_iteration(out1, SIGTERM);
  ASSERT_GE(it1, 1) << out1;
  const CheckpointData c1 = load_checkpoint(checkpoint_path((out / "checkpoints").string(), it1));
  EXPECT_EQ(c1.iteration, it1);

  // Resume: continues at it1 + 1; SIGINT once it has done at least one more iteration.
  const int64_t lines1 = metrics_lines(out);
  const auto [st2, out2] = train_then_signal(out, SIGINT, lines1, (out.string() + "_2.log"));
  ASSERT_TRUE(st2 >= 0 && WIFEXITED(st2) && WEXITSTATUS(st2) == 128 + SIGINT) << "status " << st2 << "\n" << out2;
  EXPECT_NE(out2.find("resuming from"), std::string::npos) << out2;
  EXPECT_NE(out2.find("(iteration " + std::to_string(it1) + ")"), std::string::npos) << out2;
  const int64_t it2 = stopped_iteration(out2, SIGINT);
  ASSERT_GT(it2, it1) << out2;
  const CheckpointData c2 = load_checkpoint(checkpoint_path((out / "checkpoints").string(), it2));
  EXPECT_EQ(c2.iteration, it2);
  // The metrics log continues without a gap: the first line of the resumed run is it1 + 1.
  const std::string metrics = test::read_text((out / "metrics.jsonl").string());
  EXPECT_NE(metrics.find("\"iteration\": " + std::to_string(it1 + 1) + ","), std::string::npos)
      << metrics.substr(0, 2000);
}

// `--nproc 2`: the ranks run in their own process group; a SIGTERM to the launcher reaches
// every rank once (they stop at one iteration with a checkpoint and the launcher exits 143, as
// one rank does: 128 + SIGTERM, a stopped run, not a finished or a failed one), and
// a launcher killed outright (SIGKILL) still has its ranks stop with a checkpoint
// (PR_SET_PDEATHSIG) instead of training on as orphans.
TEST(TrainSignals, NprocLauncherRelaysSigtermAndItsSigkillStillStopsTheRanks) {
  const fs::path out = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "signals_nproc_run";
  fs::remove_all(out);
  const auto [st1, out1] = train_then_signal(out, SIGTERM, 0, out.string() + "_1.log", {"--nproc", "2"});
  ASSERT_TRUE(st1 >= 0 && WIFEXITED(st1) && WEXITSTATUS(st1) == 128 + SIGTERM) << "status " << st1 << "\n" << out1;
  const int64_t it1 = stopped_iteration(out1, SIGTERM);
  ASSERT_GE(it1, 1) << out1;
  EXPECT_EQ(load_checkpoint(checkpoint_path((out / "checkpoints").string(), it1)).iteration, it1);

  const std::string log2 = out.string() + "_2.log";
  const int64_t lines1 = metrics_lines(out);
  const auto [st2, out2] = train_then_signal(out, SIGKILL, lines1, log2, {"--nproc", "2"});
  ASSERT_TRUE(st2 >= 0 && WIFSIGNALED(st2) && WTERMSIG(st2) == SIGKILL) << "status " << st2 << "\n" << out2;
  // The orphaned ranks' own lines land in the same log once they have stopped.
  int64_t it2 = -1;
  for (int i = 0; i < 600 && it2 < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    it2 = stopped_iteration(test::read_text(log2), SIGTERM);
  }
  ASSERT_GT(it2, it1) << test::read_text(log2);
  EXPECT_EQ(load_checkpoint(checkpoint_path((out / "checkpoints").string(), it2)).iteration, it2);
  // Nothing holds the run any more: a resume starts, and goes on from it2.
  const auto [st3, out3] = train_then_signal(out, SIGTERM, metrics_lines(out), out.string() + "_3.log");
  ASSERT_TRUE(st3 >= 0 && WIFEXITED(st3) && WEXITSTATUS(st3) == 128 + SIGTERM) << "status " << st3 << "\n" << out3;
  EXPECT_NE(out3.find("(iteration " + std::to_string(it2) + ")"), std::string::npos) << out3;
}

// kill -9 at random moments of a run that checkpoints every iteration (so kills land
// inside checkpoint writes too). After each kill every checkpoint left loads (CRCs checked),
// and the next start resumes from the newest one and goes past it. A second `train` on the
// same --out while one runs fails at once, naming the holder's PID.
TEST(TrainSignals, KillNineAtRandomMomentsLeavesOnlyLoadableCheckpoints) {
  const fs::path out = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "kill9_run";
  const std::string ckdir = (out / "checkpoints").string();
  fs::remove_all(out);
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("random seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const auto args = [&](int64_t iterations) {
    auto a = train_args(out, iterations);
    a.push_back("train.checkpoint_every=1");
    a.push_back("train.keep_checkpoints=2");
    return a;
  };
  int64_t newest = -1;
  for (int round = 0; round < 5; ++round) {
    const std::string log = out.string() + "_kill" + std::to_string(round) + ".log";
    const int64_t lines = metrics_lines(out);
    test::ChildGuard child(test::spawn(args(1000000), {}, log));
    // Two more iterations (so at least one more checkpoint), then a random moment.
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (metrics_lines(out) < lines + 2 && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_GE(metrics_lines(out), lines + 2) << "no progress in 60 s\n" << test::read_text(log);
    if (round == 0) {  // meanwhile a second writer is refused
      const std::string log2 = out.string() + "_second.log";
      const int st = test::wait_for(test::spawn(args(1000000), {}, log2), 60);
      EXPECT_TRUE(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) != 0) << test::read_text(log2);
      EXPECT_NE(test::read_text(log2).find("in use by another hamgan process (PID " + std::to_string(child.pid())),
                std::string::npos)
          << test::read_text(log2);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 400)(rng)));
    kill(child.pid(), SIGKILL);
    const int status = test::wait_for(child.pid(), 60);
    child.release();
    ASSERT_TRUE(status >= 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << test::read_text(log);
    if (newest >= 0) {
      EXPECT_NE(test::read_text(log).find("resuming from " + checkpoint_path(ckdir, newest)), std::string::npos)
          << test::read_text(log);
    }
    const auto all = list_checkpoints(ckdir);
    ASSERT_FALSE(all.empty()) << test::read_text(log);
    for (const auto& c : all) EXPECT_NO_THROW(load_checkpoint(c)) << c;
    const int64_t now = load_checkpoint(all.front()).iteration;
    EXPECT_GT(now, newest);
    newest = now;
  }
  // A last, uninterrupted run resumes from the newest and finishes two iterations later.
  const std::string log = out.string() + "_final.log";
  const int st = test::wait_for(test::spawn(args(newest + 2), {}, log), 120);
  ASSERT_TRUE(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) << test::read_text(log);
  EXPECT_NE(test::read_text(log).find("resuming from " + checkpoint_path(ckdir, newest)), std::string::npos)
      << test::read_text(log);
  EXPECT_NE(test::read_text(log).find("finished at iteration " + std::to_string(newest + 2)), std::string::npos)
      << test::read_text(log);
  for (const auto& f : fs::directory_iterator(ckdir))
    EXPECT_EQ(f.path().filename().string().find(".tmp"), std::string::npos) << f.path();  // cleaned at start
}

}  // namespace test_train_signals
