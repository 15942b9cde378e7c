// `hamgan train`'s start-up checks: requests the run cannot honour fail before anything is
// written, naming the flag or key.
#include <gtest/gtest.h>

#include <filesystem>

#include "gan/cli/commands.h"
#include "support/cli.h"
#include "support/errors.h"

using namespace hamgan;
namespace fs = std::filesystem;

namespace {
std::string config_path() { return std::string(std::getenv("HAMGAN_SOURCE_DIR")) + "/configs/fmnist32_quickstart.yaml"; }
}  // namespace

TEST(TrainCli, SyntheticDataWithScoresAgainstDataPathIsRefused) {
  const std::string dir = test::fresh_dir("test_train_cli", "synthetic_scores");
  const std::string e = test::error_of([&] {
    test::run_cli(cli::train, "train",
                  {"-c", config_path(), "--synthetic", "--out", dir, "--threads", "1", "eval.every=5"});
  });
  for (const char* w : {"--synthetic", "eval.every", "data.path", "eval.real"})
    EXPECT_NE(e.find(w), std::string::npos) << "'" << w << "' not in: " << e;
  EXPECT_FALSE(fs::exists(dir + "/config.yaml")) << "nothing is written before the check";
}

TEST(TrainCli, AValueThatDoesNotParseNamesItsOption) {
  const std::string e = test::error_of([&] {
    test::run_cli(cli::train, "train", {"-c", config_path(), "--threads", "two", "--out", "x"});
  });
  EXPECT_NE(e.find("--threads two"), std::string::npos) << e;
}
