// Data parallel over Gloo on loopback: 2 processes with batch B each produce the same
// discriminator update (hinge loss, Adam) as 1 process with batch 2B. The test binary
// re-launches itself as the two workers (HAMGAN_DIST_WORKER set), so this file has its
// own main().
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

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
  DataParallel dp(env);
  dp.broadcast(*d);
  auto half = [&](const torch::Tensor& t) { return t.narrow(0, env.rank * kB, kB); };
  const auto state = d_step(d, &dp, half(batch[0]), half(batch[1]), half(batch[2]));
  torch::save(state, dir() + "/rank" + std::to_string(env.rank) + ".pt");
  dp.barrier();
  return 0;
}

}  // namespace

TEST(Distributed, TwoGlooProcessesMatchOneProcessWithDoubleBatch) {
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

  ASSERT_EQ(test::run_ranks(2, {"HAMGAN_DIST_WORKER=1", "HAMGAN_DIST_DIR=" + work},
                            work + "/rank", 60),
            "");

  const auto single = d_step(d, nullptr, batch[0], batch[1], batch[2]);
  std::vector<torch::Tensor> r0, r1;
  torch::load(r0, work + "/rank0.pt");
  torch::load(r1, work + "/rank1.pt");
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
}

// A rank whose peers never come says whom it waits for and gives up after
// HAMGAN_RENDEZVOUS_TIMEOUT; --nproc inside a launcher's environment is an error at once.
TEST(Distributed, AWaitForMissingRanksIsAnnouncedAndBounded) {
  const std::string bin = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/hamgan";
  const std::string dir = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/rendezvous_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string port = std::to_string(free_loopback_port());
  const std::vector<std::string> env = {"WORLD_SIZE=2", "RANK=0", "MASTER_ADDR=127.0.0.1",
                                        "MASTER_PORT=" + port, "HAMGAN_RENDEZVOUS_TIMEOUT=3"};
  const std::vector<std::string> cfg = {"-c", test::source_path("configs/fmnist32_sagan.yaml"), "--synthetic",
                                        "--threads", "1", "train.iterations=2", "generator.ch=4", "discriminator.ch=4"};
  struct Case {
    std::string name;
    std::vector<std::string> extra;
    std::vector<std::string> expected;
  };
  for (const Case& c : {Case{"alone", {}, {"rank 0 of 2: waiting up to 3 s", "127.0.0.1:" + port, "failed within 3 s"}},
                        Case{"nproc", {"--nproc", "2"}, {"--nproc 2 and WORLD_SIZE=2", "give one"}}}) {
    std::vector<std::string> argv = {bin, "train", "--out", dir + "/" + c.name};
    argv.insert(argv.end(), cfg.begin(), cfg.end());
    argv.insert(argv.end(), c.extra.begin(), c.extra.end());
    const std::string log = dir + "/" + c.name + ".log";
    test::ChildGuard child(test::spawn(argv, env, log));
    const int status = test::wait_for(child.pid(), 60);
    child.release();
    ASSERT_NE(status, -1) << c.name << ": still waiting after 60 s";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << c.name << ": status " << status;
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const auto& e : c.expected) EXPECT_NE(text.find(e), std::string::npos) << c.name << ": " << text;
  }
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
  }
}
