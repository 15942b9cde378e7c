// `hamgan train` started by PyTorch's torchrun (2 workers, Gloo on loopback, CPU) trains,
// checkpoints and resumes exactly like `--nproc 2` with the same seed: the same losses, as
// printed in metrics.jsonl. The first leg uses torchrun's static rendezvous on a fixed
// --master_port, where the elastic agent serves the TCPStore the workers join
// (TORCHELASTIC_USE_AGENT_STORE); the resume leg --standalone (the c10d rendezvous: PyTorch
// 2.x shares the agent's store too, 1.13 lets rank 0 serve one). A worker killed
// with kill -9 ends the run with a non-zero exit, the other worker stopped by torchrun.
// torchrun comes from HAMGAN_TORCHRUN (CMake cache variable of the same name): the torchrun of
// the PyTorch whose LibTorch this build uses, as TCPStore's protocol changed in PyTorch 2.x
// (Debian's /usr/bin/torchrun for LibTorch 1.13, scripts/setup.sh's torch2 venv for 2.x);
// without it the test fails. Its 1.x and 2.x spellings of the flags: the underscore forms.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "gan/train/distributed.h"
#include "support/process.h"

namespace test_torchrun {

namespace fs = std::filesystem;
using hamgan::test::read_text;

namespace {

// torchrun, or a failure that says what setup must provide.
std::string torchrun() {
  const char* v = std::getenv("HAMGAN_TORCHRUN");
  const std::string t = v ? v : "";
  if (t.empty() || t.find("NOTFOUND") != std::string::npos || access(t.c_str(), X_OK) != 0)
    throw std::runtime_error("HAMGAN_TORCHRUN='" + t + "': expected the torchrun of the PyTorch whose LibTorch "
                             "this build uses (configure with -DHAMGAN_TORCHRUN=PATH: /usr/bin/torchrun of "
                             "Debian's python3-torch for LibTorch 1.13, scripts/setup.sh's torch2 venv for 2.x)");
  return t;
}

// Runs argv (output to `log`) for at most timeout_s; returns its exit status, -1 when it was
// killed or timed out, with the log in `out`.
int run(const std::vector<std::string>& argv, const std::string& log, double timeout_s, std::string& out) {
  const pid_t pid = hamgan::test::spawn(argv, {}, log);
  const int st = hamgan::test::wait_for(pid, timeout_s);
  out = read_text(log);
  return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// The tiny Fashion-MNIST run of both launchers: same seed, data, batch and threads.
std::vector<std::string> train_args(const fs::path& out, int iterations) {
  return {hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan", "train", "-c",
          hamgan::test::ctest_env("HAMGAN_SOURCE_DIR") + "/configs/fmnist32_quickstart.yaml", "--out", out.string(), "--threads", "1",
          "--workers", "1", "generator.ch=4", "discriminator.ch=4", "train.batch_size=4", "train.log_every=1",
          "train.sample_every=0", "train.checkpoint_every=2", "train.ema_start=1",
          "train.iterations=" + std::to_string(iterations)};
}

std::vector<std::string> with_torchrun(std::vector<std::string> rdzv, const std::vector<std::string>& args) {
  // --redirects/--tee 1 (stdout to the console and a file): Debian's torchrun 1.13 cannot parse
  // their default 0 under Python 3.11, whose IntFlag iteration skips Std.NONE.
  std::vector<std::string> a = {torchrun(), "--nproc_per_node", "2", "--max_restarts", "0", "--redirects", "1",
                                "--tee", "1"};
  a.insert(a.end(), rdzv.begin(), rdzv.end());
  a.push_back("--no_python");
  a.insert(a.end(), args.begin(), args.end());
  return a;
}

// Each line of metrics.jsonl without the timings (wall_s, it_s, img_s): the values as printed.
std::vector<std::string> losses(const fs::path& run_dir) {
  std::ifstream in(run_dir / "metrics.jsonl");
  std::vector<std::string> rows;
  const std::regex timing(R"re(, "(wall_s|it_s|img_s)": [^,}]*)re");
  for (std::string line; std::getline(in, line);) rows.push_back(std::regex_replace(line, timing, ""));
  return rows;
}

}  // namespace

TEST(Torchrun, TrainsCheckpointsAndResumesLikeNproc) {
  const fs::path root = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "torchrun_test";
  fs::remove_all(root);
  fs::create_directories(root);
  std::string out;

  // --nproc 2: 2 iterations, a checkpoint, then resumed to 4.
  const fs::path nproc = root / "nproc";
  for (int it : {2, 4}) {
    auto a = train_args(nproc, it);
    a.insert(a.end(), {"--nproc", "2"});
    ASSERT_EQ(run(a, (root / ("nproc" + std::to_string(it) + ".log")).string(), 120, out), 0) << out;
  }

  // torchrun: the same two legs.
  const fs::path tr = root / "torchrun";
  const std::string port = std::to_string(hamgan::free_loopback_port());
  ASSERT_EQ(run(with_torchrun({"--master_addr", "127.0.0.1", "--master_port", port}, train_args(tr, 2)),
                (root / "torchrun2.log").string(), 120, out),
            0)
      << out;
  EXPECT_NE(out.find("the store of torchrun's agent"), std::string::npos) << out;
  EXPECT_NE(out.find("finished at iteration 2"), std::string::npos) << out;
  ASSERT_TRUE(fs::exists(tr / "checkpoints" / "ckpt_000000002.pt")) << out;
  ASSERT_EQ(run(with_torchrun({"--standalone"}, train_args(tr, 4)), (root / "torchrun4.log").string(), 120, out), 0)
      << out;
  EXPECT_NE(out.find("(iteration 2)"), std::string::npos) << out;
  EXPECT_NE(out.find("finished at iteration 4"), std::string::npos) << out;

  const auto want = losses(nproc), got = losses(tr);
  ASSERT_EQ(want.size(), 4u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "metrics.jsonl line " << i + 1;
}

TEST(Torchrun, AKilledWorkerEndsTheRunWithAnError) {
  const fs::path root = fs::path(hamgan::test::ctest_env("HAMGAN_BINARY_DIR")) / "torchrun_kill";
  fs::remove_all(root);
  fs::create_directories(root);
  const int port = hamgan::free_loopback_port();
  auto args = train_args(root / "run", 100000);
  const std::string log = (root / "torchrun.log").string();
  const pid_t pid = hamgan::test::spawn(
      with_torchrun({"--master_addr", "127.0.0.1", "--master_port", std::to_string(port)}, args), {}, log);
  hamgan::test::ChildGuard guard(pid);
  // Rank 1 of this run (its MASTER_PORT is ours alone) once it has trained an iteration.
  const std::string port_entry = "MASTER_PORT=" + std::to_string(port);
  pid_t rank1 = -1;
  for (int i = 0; i < 1200 && rank1 < 0; ++i) {
    if (read_text((root / "run" / "metrics.jsonl").string()).find("\"iteration\": 1,") != std::string::npos)
      rank1 = hamgan::test::find_process({"RANK=1", port_entry});
    if (rank1 < 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GT(rank1, 0) << read_text(log);
  const pid_t rank0 = hamgan::test::find_process({"RANK=0", port_entry});
  ASSERT_GT(rank0, 0) << read_text(log);
  kill(rank1, SIGKILL);
  const int st = hamgan::test::wait_for(pid, 120);
  guard.release();
  const std::string out = read_text(log);
  ASSERT_GE(st, 0) << "torchrun did not end within 120 s\n" << out;
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) != 0) << out;
  EXPECT_NE(kill(rank0, 0), 0) << "rank 0 outlived torchrun\n" << out;
}

// What torchrun's agent sets (torch/distributed/elastic/agent/server/local_elastic_agent.py):
// with its store every rank is a client, and each restart keeps its keys apart.
TEST(Torchrun, ItsEnvironmentIsRead) {
  const std::vector<std::pair<const char*, const char*>> vars = {
      {"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
      {"MASTER_ADDR", "10.0.0.7"}, {"MASTER_PORT", "29533"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"},
      {"TORCHELASTIC_RUN_ID", "job7"}, {"TORCHELASTIC_RESTART_COUNT", "2"}};
  for (const auto& [k, v] : vars) setenv(k, v, 1);
  hamgan::DistEnv e = hamgan::dist_env_from_environment();
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.world_size, 4);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_EQ(e.master_addr, "10.0.0.7");
  EXPECT_EQ(e.master_port, 29533);
  EXPECT_TRUE(e.agent_store);
  EXPECT_EQ(e.store_prefix, "hamgan/job7/2/");
  setenv("TORCHELASTIC_USE_AGENT_STORE", "False", 1);  // e.g. TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1: rank 0 serves
  EXPECT_FALSE(hamgan::dist_env_from_environment().agent_store);
  for (const auto& [k, v] : vars) unsetenv(k);
  e = hamgan::dist_env_from_environment();  // hamgan's own --nproc sets none of torchrun's
  EXPECT_FALSE(e.agent_store);
  EXPECT_EQ(e.store_prefix, "");
  EXPECT_EQ(e.local_world_size, 1);
}

}  // namespace test_torchrun
