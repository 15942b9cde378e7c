// `hamgan train`'s start-up checks: requests the run cannot honour fail before anything is
// written, naming the flag or key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gan/cli/commands.h"
#include "gan/config/config.h"
#include "gan/train/run_dir.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/process.h"
#include "support/tiny_run.h"

namespace test_train_cli {

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

namespace {
void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
// What `train` writes into a run folder before its first checkpoint: none of it may appear
// in a folder it refused.
void expect_nothing_written(const std::string& dir) {
  for (const char* f : {"checkpoints", "samples", ".lock", "metrics.jsonl"})
    EXPECT_FALSE(fs::exists(fs::path(dir) / f)) << dir << "/" << f;
}
}  // namespace

// The natural experiment folder: the user's preset in DIR, read by the very command that
// trains into DIR. Its comments and `base:` are the user's; the run refuses instead of
// replacing it with the resolved config.
TEST(TrainCli, APresetReadFromTheRunFolderIsNeverReplaced) {
  const std::string dir = test::created_dir("test_train_cli", "preset_in_out");
  const std::string preset = dir + "/config.yaml";
  const std::string text = "# my experiment: the quickstart, one iteration\nbase: " + config_path() +
                           "\ntrain: {iterations: 1}\n";
  write_text(preset, text);
  const std::string e = test::error_of([&] {
    test::run_cli(cli::train, "train", {"-c", preset, "--out", dir, "--synthetic", "--threads", "1"});
  });
  test::expect_names(e, {"--out " + dir, preset, "hamgan did not write", "# my experiment", "another --out"});
  EXPECT_EQ(test::read_text(preset), text);
  expect_nothing_written(dir);
}

// An unrelated config.yaml, and class names that are not the run's, in a folder with no
// checkpoint: refused, left as they were.
TEST(TrainCli, OtherFilesNamedLikeTheRunsOwnAreNeverReplaced) {
  const std::string dir = test::created_dir("test_train_cli", "foreign_config");
  write_text(dir + "/config.yaml", "learning_rate: 0.1\n");
  std::string e = test::error_of([&] {
    test::run_cli(cli::train, "train", {"-c", config_path(), "--out", dir, "--synthetic", "--threads", "1"});
  });
  test::expect_names(e, {"--out " + dir, dir + "/config.yaml", "hamgan did not write", "learning_rate: 0.1"});
  EXPECT_EQ(test::read_text(dir + "/config.yaml"), "learning_rate: 0.1\n");
  expect_nothing_written(dir);

  const std::string notes = test::created_dir("test_train_cli", "foreign_classes");
  write_text(notes + "/classes.txt", "000 my own labels\n");
  e = test::error_of([&] {
    test::run_cli(cli::train, "train", {"-c", config_path(), "--out", notes, "--synthetic", "--threads", "1"});
  });
  test::expect_names(e, {"--out " + notes, notes + "/classes.txt", "hamgan did not write"});
  EXPECT_EQ(test::read_text(notes + "/classes.txt"), "000 my own labels\n");
  EXPECT_FALSE(fs::exists(notes + "/config.yaml"));
  expect_nothing_written(notes);
}

// A run interrupted before its first checkpoint left hamgan's own config.yaml and classes.txt:
// the rerun (also as -c DIR/config.yaml --out DIR) replaces them and trains.
TEST(TrainCli, ARerunOfAnInterruptedRunRewritesItsOwnFiles) {
  const std::string dir = test::fresh_dir("interrupted");
  const Config cfg = test::tiny("train.iterations=3");
  TrainOptions opt;
  opt.out_dir = dir;
  std::ostringstream log;
  opt.out = &log;
  opt.class_names = {"n01", "n02", "n03"};
  train(cfg, opt, test::synthetic(cfg));
  fs::remove_all(dir + "/checkpoints");
  const std::string config = test::read_text(dir + "/config.yaml");
  EXPECT_EQ(config.rfind(std::string(kRunConfigHeader) + "\n", 0), 0u) << config;
  write_text(dir + "/classes.txt", "000 n01\n");  // half of an earlier version's list
  const Config again = load_config(dir + "/config.yaml");  // -c DIR/config.yaml
  EXPECT_EQ(train(again, opt, test::synthetic(again)).iteration, 3);
  EXPECT_EQ(test::read_text(dir + "/config.yaml"), config);
  EXPECT_EQ(test::read_text(dir + "/classes.txt"), "000 n01\n001 n02\n002 n03\n");
}

// --out at a regular file or a device: the error names --out and the path and says a folder
// was expected; the file is left as it was.
TEST(TrainCli, OutAtAFileOrDeviceNamesTheFlag) {
  const std::string dir = test::created_dir("test_train_cli", "out_file");
  const std::string file = dir + "/notes.txt";
  write_text(file, "keep me\n");
  for (const std::string& out : {file, std::string("/dev/full")}) {
    if (out == "/dev/full" && !fs::exists(out)) continue;
    const std::string e = test::error_of([&] {
      test::run_cli(cli::train, "train", {"-c", config_path(), "--out", out, "--synthetic", "--threads", "1"});
    });
    test::expect_names(e, {"--out " + out + ": exists and is ", "expected a run directory (a folder"});
  }
  EXPECT_EQ(test::read_text(file), "keep me\n");
}

}  // namespace test_train_cli
