// A FIFO that no program writes, given where hamgan reads a file, is an error at once, never a
// wait for a writer: as -c and as a `base:` (read without blocking: empty, so refused), as a
// packed data.path, as --features and as HAMGAN_INCEPTION (refused as not a regular file). A
// pipe with a writer still works as -c (`-c <(...)`). Runs the built binary with a time limit,
// so a hang fails the test instead of stopping the suite.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "io/png.h"
#include "support/process.h"

namespace test_special_files {

namespace fs = std::filesystem;

namespace {

struct Ran {
  int status;
  std::string out;
};

// argv after the binary, with extra environment; at most 60 s.
Ran run_hamgan(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {}) {
  static int k = 0;
  const std::string log = (fs::temp_directory_path() / ("hamgan_special_files_" + std::to_string(k++) + ".log")).string();
  std::vector<std::string> argv = {hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan"};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = hamgan::test::spawn(argv, extra_env, log);
  hamgan::test::ChildGuard guard(pid);
  const int status = hamgan::test::wait_for(pid, 60);
  guard.release();
  return {status, hamgan::test::read_text(log)};
}

void expect_refused(const Ran& r, const std::string& what) {
  ASSERT_GE(r.status, 0) << "still waiting after 60 s (a FIFO open that blocks):\n" << r.out;
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 1) << r.out;
  EXPECT_NE(r.out.find(what), std::string::npos) << r.out;
}

}  // namespace

TEST(SpecialFiles, AFifoWithoutAWriterIsRefusedNotWaitedOn) {
  const fs::path dir = fs::temp_directory_path() / "hamgan_special_files";
  fs::remove_all(dir);
  fs::create_directories(dir / "real" / "0");
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string fifo_error = fifo + ": is a FIFO (named pipe)";
  expect_refused(run_hamgan({"info", "-c", fifo}), fifo + ": no settings found");
  const std::string based = (dir / "based.yaml").string();
  std::ofstream(based) << "base: " << fifo << "\n";
  expect_refused(run_hamgan({"info", "-c", based}), fifo + ": no settings found");
  const std::string preset = hamgan::test::ctest_env("HAMGAN_SOURCE_DIR") + "/configs/fmnist32_quickstart.yaml";
  expect_refused(run_hamgan({"train", "-c", preset, "--out", (dir / "run").string(), "data.path=" + fifo,
                         "data.format=packed", "train.iterations=1"}),
                 fifo_error);
  EXPECT_FALSE(fs::exists(dir / "run" / "checkpoints"));
  const std::string real = (dir / "real").string();
  for (int k = 0; k < 2; ++k)
    hamgan::write_png(real + "/0/" + std::to_string(k) + ".png", torch::full({32, 32, 3}, 40 * k, torch::kUInt8));
  expect_refused(run_hamgan({"fid", "--real", real, "--fake", real, "--features", fifo}), fifo_error);
  expect_refused(run_hamgan({"fid", "--real", real, "--fake", real}, {"HAMGAN_INCEPTION=" + fifo}), fifo_error);
  // A pipe with a writer (bash's process substitution): read as the config it carries.
  const std::string cmd = "bash -c 'timeout 60 " + hamgan::test::ctest_env("HAMGAN_BINARY_DIR") + "/hamgan info -c <(echo base: " + preset +
                          ") --get model.resolution' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(pclose(p), 0) << out;
  EXPECT_EQ(out, "32\n");
}

}  // namespace test_special_files
