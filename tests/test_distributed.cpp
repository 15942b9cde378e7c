// Data parallel over Gloo on loopback and over shared memory: 2 processes with batch B each
// produce the same discriminator update (hinge loss, Adam) as 1 process with batch 2B, and the two
// ways of summing give the same bits (a + b is b + a). The test binary
// re-launches itself as the two workers (HAMGAN_DIST_WORKER set), so this file has its
// own main().
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/compat_process_group.h"
#include "core/error.h"
#include "gan/config/config.h"
#include "gan/models/discriminator.h"
#include "gan/train/distributed.h"
#include "support/oracle.h"
#include "support/process.h"

using namespace hamgan;

namespace {

constexpr int64_t kB = 4;  // per-rank batch

Config small_d_config() {
  return parse_config(
      "model: {resolution: 32, n_classes: 4, image_channels: 1}\n"
      "discriminator: {ch: 8, context: {type: self_attention, resolution: 16}}\n",
      "distributed test");
}

std::string dir() {
  const char* d = std::getenv("HAMGAN_DIST_DIR");
  return d ? d : "";
}

// One hinge D step with Adam on (x_real, x_fake, y); returns the updated state followed by
// the (averaged) gradients. Adam's first step is nearly invariant to the gradient's scale,
// so the gradients are compared too.
std::vector<torch::Tensor> d_step(Discriminator& d, DataParallel* dp, const torch::Tensor& xr,
                                  const torch::Tensor& xf, const torch::Tensor& y) {
  torch::optim::Adam opt(d->parameters(), torch::optim::AdamOptions(4e-4).betas({0.0, 0.999}));
  d->train();
  opt.zero_grad();
  const torch::Tensor real = d->forward(xr, y);
  const torch::Tensor fake = d->forward(xf, y);
  const torch::Tensor loss = torch::relu(1 - real).mean() + torch::relu(1 + fake).mean();
  loss.backward();
  if (dp) dp->average_gradients(*d);
  std::vector<torch::Tensor> grads;
  for (const auto& p : d->parameters()) grads.push_back(p.grad().clone());
  opt.step();
  std::vector<torch::Tensor> out;
  for (const auto& [k, t] : state_dict(*d)) out.push_back(t.detach().clone());
  out.insert(out.end(), grads.begin(), grads.end());
  return out;
}

int worker() {
  at::set_num_threads(1);
  const DistEnv env = dist_env_from_environment();
  const Config cfg = small_d_config();
  Discriminator d(cfg.model, cfg.discriminator);
  d->to(torch::kDouble);
  std::vector<torch::Tensor> init, batch;
  torch::load(init, dir() + "/init.pt");
  torch::load(batch, dir() + "/batch.pt");
  if (env.rank == 0) {  // rank 0 holds the weights; broadcast must bring them to rank 1
    torch::NoGradGuard ng;
    size_t i = 0;
    for (auto& [k, t] : state_dict(*d)) t.copy_(init[i++]);
  }
  // HAMGAN_DIST_BACKEND: train.dist_backend's word; auto on one machine's CPU is shared memory,
  // and ranks said to span machines (LOCAL_WORLD_SIZE) never use it.
  const std::string word = std::getenv("HAMGAN_DIST_BACKEND");
  const DistBackend backend = word_from("HAMGAN_DIST_BACKEND", word, kDistBackendWords);
  DataParallel dp(env, torch::kCPU, backend);
  const bool shm = backend != DistBackend::Gloo && env.local_world_size == env.world_size;
  if (dp.shared_memory() != shm)
    fail("train.dist_backend=", word, ": shared memory ", dp.shared_memory() ? "used" : "not used");
  dp.broadcast(*d);
  auto half = [&](const torch::Tensor& t) { return t.narrow(0, env.rank * kB, kB); };
  const auto state = d_step(d, &dp, half(batch[0]), half(batch[1]), half(batch[2]));
  torch::save(state, dir() + "/rank" + std::to_string(env.rank) + ".pt");
  dp.barrier();
  return 0;
}

}  // namespace

TEST(Distributed, TwoProcessesMatchOneProcessWithDoubleBatch) {
  const std::string work = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/distributed_test";
  std::filesystem::create_directories(work);
  torch::manual_seed(11);
  const Config cfg = small_d_config();
  Discriminator d(cfg.model, cfg.discriminator);
  d->to(torch::kDouble);  // double: summation order must not hide a real difference
  {
    torch::NoGradGuard ng;  // make self-attention active
    for (auto& kv : d->named_parameters())
      if (kv.key().find("gamma") != std::string::npos) kv.value().fill_(0.5);
  }
  std::vector<torch::Tensor> init;
  for (const auto& [k, t] : state_dict(*d)) init.push_back(t.detach().clone());
  const std::vector<torch::Tensor> batch = {torch::randn({2 * kB, 1, 32, 32}, torch::kDouble),
                                            torch::randn({2 * kB, 1, 32, 32}, torch::kDouble),
                                            torch::randint(0, 4, {2 * kB}, torch::kLong)};
  torch::save(init, work + "/init.pt");
  torch::save(batch, work + "/batch.pt");

  const auto single = d_step(d, nullptr, batch[0], batch[1], batch[2]);
  std::vector<torch::Tensor> gloo;
  for (const std::string backend : {"gloo", "auto", "shm", "auto LOCAL_WORLD_SIZE=1"}) {
    SCOPED_TRACE("train.dist_backend=" + backend);
    const size_t space = backend.find(' ');
    std::vector<std::string> env = {"HAMGAN_DIST_WORKER=1", "HAMGAN_DIST_DIR=" + work,
                                    "HAMGAN_DIST_BACKEND=" + backend.substr(0, space)};
    if (space != std::string::npos) env.push_back(backend.substr(space + 1));
    ASSERT_EQ(test::run_ranks(2, env, work + "/rank", 60), "");

    std::vector<torch::Tensor> r0, r1;
    torch::load(r0, work + "/rank0.pt");
    torch::load(r1, work + "/rank1.pt");
    std::filesystem::remove(work + "/rank0.pt");
    std::filesystem::remove(work + "/rank1.pt");
    ASSERT_EQ(r0.size(), single.size());
    ASSERT_EQ(r1.size(), single.size());
    size_t moved = 0;
    const size_t n_state = init.size();
    for (size_t i = 0; i < single.size(); ++i) {
      EXPECT_TRUE(torch::equal(r0[i], r1[i])) << "ranks diverged at state entry " << i;
      // Double precision; only the summation order differs from one 2B batch.
      EXPECT_TRUE(test::close(r0[i], single[i], 1e-9, 1e-12)) << "state entry " << i;
      if (i < n_state && !torch::equal(single[i], init[i])) ++moved;
    }
    EXPECT_GT(moved, n_state / 2) << "the update should change most of D's state";
    if (gloo.empty()) gloo = r0;
    for (size_t i = 0; i < gloo.size(); ++i) EXPECT_TRUE(torch::equal(r0[i], gloo[i])) << "not Gloo's bits: entry " << i;
  }
  // shm where the ranks span machines: every rank fails with the reason, before any training.
  const std::string failed = test::run_ranks(
      2, {"HAMGAN_DIST_WORKER=1", "HAMGAN_DIST_DIR=" + work, "HAMGAN_DIST_BACKEND=shm", "LOCAL_WORLD_SIZE=1"},
      work + "/rank", 60);
  for (const char* rank : {"rank 0 of 2", "rank 1 of 2"})
    EXPECT_NE(failed.find(std::string(rank) + ": train.dist_backend=shm, but the ranks cannot sum through shared "
                                              "memory: the ranks are on more than one machine (LOCAL_WORLD_SIZE < "
                                              "WORLD_SIZE); set train.dist_backend=auto or gloo"),
              std::string::npos) << failed;
}

// A rank whose peers never come says whom it waits for and gives up after
// HAMGAN_RENDEZVOUS_TIMEOUT, once (not once for the store and once more for the group), with one
// message and no C++ backtrace; so does a rank whose MASTER_PORT is held by a listener that never
// answers; --nproc inside a launcher's environment is an error at once.
TEST(Distributed, AWaitForMissingRanksIsAnnouncedAndBounded) {
  const std::string bin = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/hamgan";
  const std::string dir = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/rendezvous_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string port = std::to_string(free_loopback_port());
  // A plain TCP listener: the kernel completes the connections, nothing ever answers.
  const int silent = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(silent, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(silent, 16), 0);
  ASSERT_EQ(getsockname(silent, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string silent_port = std::to_string(ntohs(a.sin_port));
  const double timeout = 5;
  const std::vector<std::string> env = {"WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "HAMGAN_RENDEZVOUS_TIMEOUT=5"};
  const std::vector<std::string> cfg = {"-c", test::source_path("configs/fmnist32_sagan.yaml"), "--synthetic",
                                        "--threads", "1", "train.iterations=2", "generator.ch=4", "discriminator.ch=4"};
  struct Case {
    std::string name;
    std::vector<std::string> env;
    std::vector<std::string> extra;
    std::vector<std::string> expected;
    bool timed;  // fails after the timeout, not at once
  };
  for (const Case& c : {Case{"alone", {"RANK=0", "MASTER_PORT=" + port}, {},
                             {"rank 0 of 2: still waiting for the other ranks at 127.0.0.1:" + port +
                                  " (MASTER_ADDR:MASTER_PORT); giving up after 5 s (HAMGAN_RENDEZVOUS_TIMEOUT)",
                              "failed within 5 s", "are all 2 ranks started"},
                             true},
                        Case{"rank1_alone", {"RANK=1", "MASTER_PORT=" + port}, {},
                             {"127.0.0.1:" + port + " (MASTER_ADDR:MASTER_PORT)", "failed within 5 s"}, true},
                        Case{"silent", {"RANK=1", "MASTER_PORT=" + silent_port}, {},
                             {"rank 1 of 2: something accepted the connection at 127.0.0.1:" + silent_port +
                                  " (MASTER_ADDR:MASTER_PORT) but did not answer as a TCPStore within 5 s "
                                  "(HAMGAN_RENDEZVOUS_TIMEOUT); expected the store that rank 0 serves there: is MASTER_PORT another "
                                  "program's port?\n"},
                             true},
                        Case{"nproc", {"RANK=0", "MASTER_PORT=" + port}, {"--nproc", "2"},
                             {"--nproc 2 and WORLD_SIZE=2", "give one"}, false}}) {
    std::vector<std::string> argv = {bin, "train", "--out", dir + "/" + c.name};
    argv.insert(argv.end(), cfg.begin(), cfg.end());
    argv.insert(argv.end(), c.extra.begin(), c.extra.end());
    std::vector<std::string> e = env;
    e.insert(e.end(), c.env.begin(), c.env.end());
    const std::string log = dir + "/" + c.name + ".log";
    const auto start = std::chrono::steady_clock::now();
    test::ChildGuard child(test::spawn(argv, e, log));
    const int status = test::wait_for(child.pid(), 60);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    child.release();
    ASSERT_NE(status, -1) << c.name << ": still waiting after 60 s";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << c.name << ": status " << status;
    const std::string text = test::read_text(log);
    for (const auto& x : c.expected) EXPECT_NE(text.find(x), std::string::npos) << c.name << ": " << text;
    EXPECT_EQ(text.find("Exception raised from"), std::string::npos) << c.name << ": " << text;
    EXPECT_EQ(text.find("frame #"), std::string::npos) << c.name << ": " << text;
    if (!c.timed) continue;
    // About one timeout (LibTorch's connect gives up a little early; plus the start of the
    // binary and the silence's 1 s margin); two timeouts are too long whatever the start costs.
    EXPECT_GE(elapsed, timeout - 1) << c.name << ": " << text;
    EXPECT_LT(elapsed, 2 * timeout) << c.name << ": " << text;
  }
  close(silent);
}

TEST(Distributed, EnvironmentIsValidated) {
  setenv("WORLD_SIZE", "2", 1);
  setenv("RANK", "5", 1);
  EXPECT_THROW(dist_env_from_environment(), Error);
  unsetenv("RANK");
  unsetenv("WORLD_SIZE");
  const DistEnv e = dist_env_from_environment();
  EXPECT_EQ(e.world_size, 1);
  EXPECT_FALSE(e.enabled());
  // RANK=1 alone: the error names the missing WORLD_SIZE, not a range of [0, 0].
  setenv("RANK", "1", 1);
  std::string msg;
  try {
    dist_env_from_environment();
  } catch (const Error& x) {
    msg = x.what();
  }
  unsetenv("RANK");
  EXPECT_NE(msg.find("RANK='1' but WORLD_SIZE is not set"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("[0, 0]"), std::string::npos) << msg;
  setenv("RANK", "0", 1);  // rank 0 of a world of one stays valid
  EXPECT_EQ(dist_env_from_environment().world_size, 1);
  unsetenv("RANK");
}

int main(int argc, char** argv) { return hamgan::test::test_main(argc, argv, "HAMGAN_DIST_WORKER", worker); }

// One rank per GPU (two ranks on one GPU would fail in NCCL with "Duplicate GPU detected"),
// more ranks than GPUs a clear error; the GPU count is injected, so this runs without one.
TEST(Distributed, EachRankGetsItsOwnGpuOrAClearError) {
  EXPECT_EQ(train_device("cuda", 0, 2), torch::Device(torch::kCUDA, 0));
  EXPECT_EQ(train_device("auto", 1, 2), torch::Device(torch::kCUDA, 1));
  EXPECT_EQ(train_device("cuda", -1, 2), torch::Device(torch::kCUDA));  // one process: the current GPU
  EXPECT_EQ(train_device("auto", 1, 0), torch::Device(torch::kCPU));    // no GPU: every rank on the CPU
  EXPECT_EQ(train_device("cpu", 5, 8), torch::Device(torch::kCPU));
  for (const char* dev : {"cuda", "auto"}) {
    std::string e;
    try {
      train_device(dev, 1, 1);
    } catch (const Error& x) {
      e = x.what();
    }
    EXPECT_NE(e.find("local rank 1: train.device " + std::string(dev) + " gives each rank"), std::string::npos) << e;
    EXPECT_NE(e.find("--nproc 1"), std::string::npos) << e;
    EXPECT_NE(e.find("train.dist_backend=gloo"), std::string::npos) << e;  // the way to share the GPU
  }
}

// train.dist_backend: only Gloo lets local ranks share GPUs (local rank r on cuda:(r % GPUs)),
// since it stages CUDA tensors through the host; auto and nccl keep one GPU per local rank.
// nccl needs CUDA and a LibTorch with NCCL, and says so naming the key. GPU counts are injected.
TEST(Distributed, OnlyGlooRanksShareGpus) {
  const auto error = [](const char* dev, int rank, int64_t gpus, DistBackend backend) {
    try {
      train_device(dev, rank, gpus, backend);
    } catch (const Error& x) {
      return std::string(x.what());
    }
    return std::string();
  };
  // gloo: two ranks on one GPU, five on two, round-robin.
  EXPECT_EQ(train_device("cuda", 0, 1, DistBackend::Gloo), torch::Device(torch::kCUDA, 0));
  EXPECT_EQ(train_device("cuda", 1, 1, DistBackend::Gloo), torch::Device(torch::kCUDA, 0));
  EXPECT_EQ(train_device("auto", 1, 1, DistBackend::Gloo), torch::Device(torch::kCUDA, 0));
  EXPECT_EQ(train_device("auto", 4, 2, DistBackend::Gloo), torch::Device(torch::kCUDA, 0));
  EXPECT_EQ(train_device("cuda", 3, 2, DistBackend::Gloo), torch::Device(torch::kCUDA, 1));
  EXPECT_EQ(train_device("auto", 3, 0, DistBackend::Gloo), torch::Device(torch::kCPU));  // no GPU: the CPU, over Gloo
  // auto: one GPU per local rank, as before; more ranks than GPUs names the key that shares them.
  EXPECT_EQ(train_device("cuda", 1, 2, DistBackend::Auto), torch::Device(torch::kCUDA, 1));
  for (const char* dev : {"cuda", "auto"}) {
    const std::string e = error(dev, 2, 2, DistBackend::Auto);
    EXPECT_NE(e.find("local rank 2: train.device " + std::string(dev)), std::string::npos) << e;
    EXPECT_NE(e.find("--nproc 2"), std::string::npos) << e;
    EXPECT_NE(e.find("train.dist_backend=gloo"), std::string::npos) << e;
  }
  // nccl: where this LibTorch has NCCL, one GPU per local rank; else an error naming the key.
  if (compat::has_nccl()) {
    EXPECT_EQ(train_device("cuda", 1, 2, DistBackend::Nccl), torch::Device(torch::kCUDA, 1));
    const std::string e = error("cuda", 1, 1, DistBackend::Nccl);
    EXPECT_NE(e.find("local rank 1: train.device cuda gives each rank"), std::string::npos) << e;
    EXPECT_NE(e.find("train.dist_backend=gloo"), std::string::npos) << e;
  } else {
    const std::string e = error("cuda", 0, 2, DistBackend::Nccl);
    EXPECT_NE(e.find("train.dist_backend=nccl"), std::string::npos) << e;
    EXPECT_NE(e.find("without NCCL"), std::string::npos) << e;
  }
  // nccl on the CPU: an error naming the key, with or without GPUs.
  for (const auto& [dev, gpus] : {std::pair<const char*, int64_t>{"cpu", 2}, {"auto", 0}}) {
    const std::string e = error(dev, 0, gpus, DistBackend::Nccl);
    EXPECT_NE(e.find("train.dist_backend=nccl reduces CUDA tensors only"), std::string::npos) << e;
    EXPECT_NE(e.find("train.device " + std::string(dev)), std::string::npos) << e;
  }
  // The CPU over auto or gloo, and one process whatever the backend: as without the key.
  EXPECT_EQ(train_device("cpu", 3, 1, DistBackend::Auto), torch::Device(torch::kCPU));
  EXPECT_EQ(train_device("cpu", 3, 1, DistBackend::Gloo), torch::Device(torch::kCPU));
  EXPECT_EQ(train_device("cpu", -1, 1, DistBackend::Nccl), torch::Device(torch::kCPU));
  EXPECT_EQ(train_device("cuda", -1, 1, DistBackend::Nccl), torch::Device(torch::kCUDA));
  // shm: the CPU's; on CUDA an error naming the key and the way out.
  EXPECT_EQ(train_device("cpu", 1, 2, DistBackend::Shm), torch::Device(torch::kCPU));
  EXPECT_EQ(train_device("auto", 1, 0, DistBackend::Shm), torch::Device(torch::kCPU));
  for (const char* dev : {"cuda", "auto"}) {
    const std::string e = error(dev, 0, 1, DistBackend::Shm);
    EXPECT_NE(e.find("train.dist_backend=shm sums CPU tensors through shared memory, and train.device " +
                     std::string(dev) + " puts the ranks on CUDA"),
              std::string::npos) << e;
    EXPECT_NE(e.find("train.device=cpu"), std::string::npos) << e;
  }
}
