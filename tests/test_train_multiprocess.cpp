// `hamgan train --nproc 2` over Gloo on loopback: a short 2-process run writes one
// checkpoint (rank 0 only) that a 1-process run then resumes. Runs the built binary.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) throw std::runtime_error(std::string(name) + " is not set: run through ctest");
  return v;
}

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
  const fs::path dir = fs::path(env("HAMGAN_BINARY_DIR")) / "multiprocess_run";
  fs::remove_all(dir);
  const std::string base = env("HAMGAN_BINARY_DIR") + "/hamgan train --synthetic -c " +
                           env("HAMGAN_SOURCE_DIR") + "/configs/fmnist32_sagan.yaml --out " +
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

  const auto [rc1, out1] = run(base + " train.iterations=3");
  ASSERT_EQ(rc1, 0) << out1;
  EXPECT_NE(out1.find("resuming from"), std::string::npos) << out1;
  EXPECT_NE(out1.find("(iteration 2)"), std::string::npos) << out1;
  EXPECT_NE(out1.find("finished at iteration 3"), std::string::npos) << out1;
}
