// Requests the commands cannot meet are errors before any work, naming the flag and the bound
// (gan/cli/*.cpp), and what a command says it did is what it did: sample's counts and
// --overwrite, compare's outputs, a diverged classifier, a benchmark with failed cases, a class
// count that does not match the data.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gan/cli/commands.h"
#include "io/png.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/image_folder.h"
#include "support/scores_csv.h"
#include "support/oracle.h"
#include "support/process.h"
#include "support/tiny_checkpoint.h"
#include "support/tiny_run.h"

namespace test_cli_errors {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

// An empty directory of this test, created.
std::string fresh(const std::string& name) { return test::created_dir("test_cli_errors", name); }
// A path of this test, emptied, not created.
std::string fresh_path(const std::string& name) { return test::fresh_dir("test_cli_errors", name); }

std::string image_folder(const std::string& name, int good, int junk) {
  return test::image_folder(fresh(name), good, junk);
}

using test::expect_names;
using test::fid_error;
using test::sample_error;

std::string tiny_checkpoint(const std::string& name) { return test::tiny_checkpoint_in(fresh_path(name)); }

}  // namespace

// `compare --run Q1 --run Q2 --out Q1/scores` never replaces Q1's scores.csv with the summary.
TEST(CliErrors, CompareNeverWritesOverARunsScoreTable) {
  std::vector<std::string> runs;
  for (const char* name : {"q1", "q2"}) {
    const std::string d = fresh(std::string("compare_") + name);
    runs.push_back(test::write_scores_csv(d, {{10, "40"}, {20, "30"}}));
  }
  const std::string before = test::read_text(runs[0] + "/scores.csv");
  const std::string e = test::error_of(
      [&] { test::run_cli(cli::compare, "compare", {"--run", runs[0], "--run", runs[1], "--out", runs[0] + "/scores"}); });
  EXPECT_NE(e.find("scores.csv exists and is not the output of an earlier `hamgan compare`"), std::string::npos) << e;
  EXPECT_EQ(test::read_text(runs[0] + "/scores.csv"), before);
  // Its own earlier output may be replaced.
  const std::string out = fresh("compare_out") + "/cmp";
  for (int i = 0; i < 2; ++i) test::run_cli(cli::compare, "compare", {"--run", runs[0], "--run", runs[1], "--out", out});
  EXPECT_TRUE(fs::exists(out + ".csv"));
}

// `--threads 1000` (minutes to start), `sample --grid --cols 100000` and `--steps` (minutes, or
// out of memory): each an error before any work.
TEST(CliErrors, CountsThatWouldHangAreBounded) {
  const std::string ck = test::tiny_checkpoint_in(fresh("bounds"));
  const std::string dir = fs::path(ck).parent_path().string();
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--cols", "100000"}, {"--cols", "100000000"}, {"--steps", "100000000"}}) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string e = test::error_of([&] {
      test::run_cli(cli::sample_cmd, "sample",
                    {"--checkpoint", ck, "--grid", dir + "/g.png", "--interpolate", dir + "/i.png", flag, value});
    });
    EXPECT_NE(e.find(flag + " " + value + ": expected at most 256"), std::string::npos) << e;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  }
  const std::string e = test::error_of([&] {
    test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", ck, "--grid", dir + "/g.png", "--threads", "1000"});
  });
  EXPECT_NE(e.find("--threads 1000: expected 1.."), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir + "/g.png"));
}

// Bounds and signs of the sampling flags, checked before anything is done.
TEST(CliErrors, TruncationAndCountsAreBounded) {
  const std::string ck = tiny_checkpoint("bounds");
  const std::string out = fresh_path("bounds_out");
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3", "--truncation", "1e-9"}),
               {"--truncation", "1e-09", ">= 0.01"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3", "--truncation", "-1"}),
               {"--truncation", "-1"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "1000000000000"}),
               {"-n", "1000000000000", "at most 10000000"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "--per-class", "4000000000"}),
               {"--per-class", "at most 10000000"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "-3"}), {"-n", "-3", ">= "});
  EXPECT_FALSE(fs::exists(out));
  expect_names(fid_error({"--real", "x.npz", "--fake", out, "-n", "-3"}), {"-n", "-3", ">= 0"});
  expect_names(fid_error({"--real", "x.npz", "--checkpoint", ck, "-n", "-5"}), {"-n", "-5", ">= 0"});
  expect_names(fid_error({"--real", "x.npz", "--checkpoint", ck, "-n", "1000000000000"}),
               {"-n", "1000000"});
  // The smallest accepted truncation ends quickly and keeps |z| <= T.
  EXPECT_EQ(test::run_cli(cli::sample_cmd, "sample",
                          {"--checkpoint", ck, "--out", out, "-n", "3", "--truncation", "0.01"})
                .find("wrote 3 images"),
            0u);
}

// `sample -n 100 --per-class 1` is an error (two counts); `sample --overwrite -n 4` over 12
// earlier images leaves 4, and files that are not samples stay.
TEST(CliErrors, SampleCountsAndOverwriteMeanWhatTheySay) {
  const std::string ck = fresh("sample_ck") + "/ckpt_000000010.pt";
  test::write_tiny_checkpoint(ck, 10, true, 1, test::tiny_checkpoint_yaml());
  const std::string out = fresh("sample_out");
  const std::string e = test::error_of(
      [&] { test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", ck, "--out", out, "-n", "100", "--per-class", "1"}); });
  EXPECT_NE(e.find("give one of them"), std::string::npos) << e;
  test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", ck, "--out", out, "-n", "12", "--threads", "1"});
  std::ofstream(out + "/notes.txt") << "mine";
  test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", ck, "--out", out, "-n", "4", "--overwrite", "--threads", "1"});
  int pngs = 0;
  for (const auto& f : fs::recursive_directory_iterator(out)) pngs += f.path().extension() == ".png";
  EXPECT_EQ(pngs, 4);
  EXPECT_TRUE(fs::exists(out + "/notes.txt"));
}

// `classifier train --lr 1e30`: the loss diverges, nothing is written, the command fails. One
// undecodable image among the training images is left out.
TEST(CliErrors, ADivergedClassifierIsNotWritten) {
  const std::string data = image_folder("clf_data", 8, 0);
  // Two classes apart: a dark one.
  for (int k = 0; k < 8; ++k) write_png(data + "/b/" + std::to_string(k) + ".png", torch::zeros({32, 32, 3}, torch::kUInt8));
  const std::string out = fresh("clf_out") + "/clf.pt";
  const std::string e = test::error_of([&] {
    test::run_cli(cli::classifier, "classifier",
                  {"train", "--data", data, "--out", out, "--lr", "1e30", "--epochs", "3", "--batch", "4", "--width", "4",
                   "--feature-dim", "8", "--resolution", "32", "--channels", "3", "--threads", "1", "--workers", "1"});
  });
  EXPECT_NE(e.find("the loss became"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(out));
  // One undecodable image among them is left out.
  const std::string junk = image_folder("clf_junk", 8, 1);
  for (int k = 0; k < 8; ++k) write_png(junk + "/b/" + std::to_string(k) + ".png", torch::zeros({32, 32, 3}, torch::kUInt8));
  test::run_cli(cli::classifier, "classifier",
                {"train", "--data", junk, "--out", out, "--epochs", "2", "--batch", "4", "--width", "4", "--feature-dim",
                 "8", "--resolution", "32", "--channels", "3", "--threads", "1", "--workers", "1", "--holdout", "0.25"});
  EXPECT_TRUE(fs::exists(out));
}

// `bench context` with a case that cannot run prints the table with the error as its row,
// then fails.
TEST(CliErrors, ABenchmarkWithFailedCasesFails) {
  // The real executable: bench context re-runs itself (/proc/self/exe) for each case.
  const std::string bin = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/hamgan";
  const std::string log = fresh("bench") + ".log";
  const pid_t pid = test::spawn({bin, "bench", "context", "--modules", "self_attention,kao_kv", "--shape", "1x1x4x4",
                                 "--repeats", "0", "--threads", "1"}, {}, log);
  const int status = test::wait_for(pid, 120);
  const std::string out = test::read_text(log);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("self_attention: 1 channels are too few"), std::string::npos) << out;  // the row stays
  EXPECT_NE(out.find("cases failed (the rows above say why)"), std::string::npos) << out;
}

// A model.n_classes that does not match the folder fails before the run directory is made
// (no config.yaml left behind), naming the count to set.
TEST(CliErrors, AWrongClassCountFailsBeforeTheRunDirectoryIsWritten) {
  const std::string data = image_folder("two_classes", 4, 0);
  const std::string out = fresh_path("wrong_classes_run");  // not created
  const std::string e = test::error_of([&] {
    test::run_cli(cli::train, "train",
                  {"-c", test::source_path("configs/fmnist32_sagan.yaml"), "--out", out, "data.format=folder",
                   "data.path=" + data, "model.n_classes=5", "model.image_channels=3", "--threads", "1"});
  });
  EXPECT_NE(e.find("has 2 classes; set model.n_classes=2"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(out)) << "nothing written";
}

}  // namespace test_cli_errors
