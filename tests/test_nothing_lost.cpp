// Issue 24 (third probe): each finding made small, each failed before its fix. Pruning and
// resume decide by what a checkpoint verifiably holds; an unreadable file stops the run;
// compare never writes over a run's fid.csv; recursive and exponential YAML aliases, a second
// YAML document and empty overrides are errors; a disk that cannot hold a packed file is an
// error with no .partial left; picture sizes and thread counts are bounded.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/cli/commands.h"
#include "gan/config.h"
#include "gan/data/dataset.h"
#include "gan/data/packed.h"
#include "gan/eval/fid_csv.h"
#include "gan/eval/reference.h"
#include "gan/eval/score_run.h"
#include "io/decode.h"
#include "io/dir_lock.h"
#include "io/image.h"
#include "io/png.h"
#include "metrics/feature_net.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/oracle.h"
#include "support/process.h"
#include "support/tiny_checkpoint.h"
#include "support/tiny_run.h"

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

// An empty directory of this test.
std::string fresh(const std::string& name) {
  const std::string d = test::fresh_dir("test_nothing_lost", name);
  fs::create_directories(d);
  return d;
}

// Runs f in a child process (as user `nobody` when we are root, so file modes bind) and returns
// its exit status: the parent's checks stay in the parent.
int in_child(const std::function<int()>& f, bool drop_root) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (drop_root && geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(90);
    _exit(f());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

// 24.1: an empty newest checkpoint (`: > ckpt_000000999.pt`) used to count as kept, and
// keep_checkpoints=1 then deleted every good one.
TEST(NothingLost, PruningNeverTradesAGoodCheckpointForADamagedOne) {
  const std::string dir = fresh("prune");
  test::run(test::tiny("train.iterations=3"), dir);
  const std::string junk = dir + "/checkpoints/ckpt_000000999.pt";
  std::ofstream(junk).close();
  const auto r = test::run(test::tiny("train.iterations=6 train.checkpoint_every=1 train.keep_checkpoints=1"), dir);
  EXPECT_EQ(r.iteration, 6);
  const auto names = list_checkpoints(dir + "/checkpoints");
  ASSERT_EQ(names.size(), 2u);  // the junk (left alone) and the newest good one
  EXPECT_EQ(names[0], junk);
  EXPECT_EQ(load_checkpoint(names[1]).iteration, 6);
  // A valid file under another iteration's name does not count either.
  fs::copy_file(names[1], dir + "/checkpoints/ckpt_000000500.pt");
  test::run(test::tiny("train.iterations=7 train.checkpoint_every=1 train.keep_checkpoints=1"), dir);
  EXPECT_EQ(load_checkpoint(checkpoint_path(dir + "/checkpoints", 7)).iteration, 7);
}

// 24.2: a newest checkpoint that cannot be opened was "skipped as damaged"; training resumed
// from the older one and overwrote it.
TEST(NothingLost, AnUnreadableCheckpointStopsInsteadOfBeingSkipped) {
  const std::string dir = fresh("unreadable");
  test::run(test::tiny("train.iterations=6"), dir);  // checkpoints 3 and 6
  const std::string newest = checkpoint_path(dir + "/checkpoints", 6);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir + "/checkpoints", fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  ASSERT_EQ(chmod(newest.c_str(), 0), 0);
  const int rc = in_child([&] {
    std::ostringstream warn;
    const std::string e = test::error_of([&] { load_latest_checkpoint(dir + "/checkpoints", warn); });
    return e.find("cannot read this checkpoint") != std::string::npos && e.find(newest) != std::string::npos &&
                   warn.str().empty()
               ? 0 : 1;
  }, true);
  chmod(newest.c_str(), 0644);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(load_checkpoint(newest).iteration, 6);  // untouched
}

// 24.3: `compare --run Q1 --run Q2 --out Q1/fid` replaced Q1's fid.csv with the summary.
TEST(NothingLost, CompareNeverWritesOverARunsFidCsv) {
  std::vector<std::string> runs;
  for (const char* name : {"q1", "q2"}) {
    const std::string d = fresh(std::string("compare_") + name);
    for (int64_t it : {10, 20}) {
      eval::FidRow row;
      row.iteration = it, row.fid = 50.0 - it, row.n = 10;
      eval::append_fid_row(d + "/fid.csv", row);
    }
    runs.push_back(d);
  }
  const std::string before = test::read_text(runs[0] + "/fid.csv");
  const std::string e = test::error_of(
      [&] { test::run_cli(cli::compare, "compare", {"--run", runs[0], "--run", runs[1], "--out", runs[0] + "/fid"}); });
  EXPECT_NE(e.find("fid.csv exists and is not the output of an earlier `hamgan compare`"), std::string::npos) << e;
  EXPECT_EQ(test::read_text(runs[0] + "/fid.csv"), before);
  // Its own earlier output may be replaced.
  const std::string out = fresh("compare_out") + "/cmp";
  for (int i = 0; i < 2; ++i) test::run_cli(cli::compare, "compare", {"--run", runs[0], "--run", runs[1], "--out", out});
  EXPECT_TRUE(fs::exists(out + ".csv"));
}

// 24.4 and 24.6: a recursive alias crashed (stack overflow); a ten-line "billion laughs" ran for
// minutes. Both are errors naming the file, at once.
TEST(NothingLost, RecursiveAndExponentialYamlAliasesAreErrors) {
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c)
    laughs += std::string(1, c) + ": &" + c + " [*" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) +
              ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
              char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + "]\n";
  for (const std::string& yaml : {std::string("x: &m [*m]\n"), std::string("train: &t {a: *t}\n"), laughs}) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string e = test::error_of([&] { parse_config(yaml, "alias.yaml"); });
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
    EXPECT_NE(e.find("alias.yaml"), std::string::npos) << e;
    EXPECT_NE(e.find("alias"), std::string::npos) << e;
  }
}

// 24.7: a second YAML document was ignored; `train.batch_size=` (or ~, null) silently took the
// built-in default over the file's value.
TEST(NothingLost, ASecondYamlDocumentAndEmptyOverridesAreErrors) {
  const std::string e = test::error_of([&] { parse_config("train: {batch_size: 8}\n---\ntrain: {batch_size: 4}\n", "two.yaml"); });
  EXPECT_NE(e.find("two.yaml: a second YAML document starts at line 2"), std::string::npos) << e;
  for (const std::string ov : {"train.batch_size=", "train.batch_size=~", "data.path=null"}) {
    const std::string m = test::error_of([&] { parse_config("train: {batch_size: 8}\n", "c.yaml", {ov}); });
    EXPECT_NE(m.find("'" + ov + "': expected a value after '='"), std::string::npos) << m;
  }
  EXPECT_EQ(parse_config("eval: {inception: w.pth}\n", "c.yaml", {"eval.inception=\"\""}).eval.inception, "");
}

// 24.5: `prepare --out` on a disk that cannot hold the file died of SIGBUS and left a sparse
// .partial; on a directory it said "cannot mmap: No such device". Here a file-size limit stands
// in for the full disk.
TEST(NothingLost, APackedFileTheDiskCannotHoldIsAnErrorAndLeavesNothing) {
  const std::string dir = fresh("prepare");
  const std::string out = dir + "/train.packed";
  const int rc = in_child([&] {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{1 << 16, 1 << 16};
    setrlimit(RLIMIT_FSIZE, &lim);
    PrepareOptions po;
    po.source = "/usr/share/datasets/fashion-mnist";
    po.out = out;
    po.resolution = 32;
    po.channels = 1;
    po.progress = false;
    const std::string e = test::error_of([&] { prepare_packed(po); });
    return e.find(".partial") != std::string::npos && e.find("(no error)") == std::string::npos ? 0 : 1;
  }, false);
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_FALSE(fs::exists(out));
  const std::string e = test::error_of([&] {
    test::run_cli(cli::prepare, "prepare", {"--data", "/usr/share/datasets/fashion-mnist", "--out", dir,
                                            "--resolution", "32", "--channels", "1"});
  });
  EXPECT_NE(e.find("is a directory; expected the path of the packed file"), std::string::npos) << e;
}

// 24.6: `--threads 1000` took minutes to start; `sample --grid --cols 100000` (and `--steps`)
// ran on for minutes or ran out of memory. Each is an error before any work.
TEST(NothingLost, CountsThatWouldHangAreBounded) {
  const std::string ck = fresh("bounds") + "/ckpt_000000010.pt";
  test::write_tiny_checkpoint(ck, 10, true, 1, test::tiny_checkpoint_yaml());
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

namespace {

// Features = each image's mean per channel: enough to see what went into a statistic.
struct MeanNet : metrics::FeatureNet {
  torch::Tensor prepare(const torch::Tensor& x) const override { return x; }
  metrics::FeatureOutput features(const torch::Tensor& p, bool) const override { return {p.mean({2, 3}), {}}; }
  bool has_logits() const override { return false; }
  torch::Device device() const override { return torch::kCPU; }
};

// DIR/<a|b>/<k>.png: `good` white 32x32 images per class, plus `junk` undecodable .png files.
std::string image_folder(const std::string& name, int good, int junk) {
  const std::string dir = fresh(name);
  for (const char* cls : {"a", "b"}) {
    fs::create_directories(dir + "/" + cls);
    for (int k = 0; k < good; ++k)
      write_png(dir + "/" + cls + "/" + std::to_string(k) + ".png", torch::full({32, 32, 3}, 255, torch::kUInt8));
    for (int k = 0; k < junk; ++k) std::ofstream(dir + "/" + cls + "/junk" + std::to_string(k) + ".png") << "not a png";
  }
  return dir;
}

}  // namespace

// 24.7: `fid stats --data` over a folder with undecodable images counted each as a black image.
TEST(NothingLost, UndecodableImagesAreLeftOutOfStatisticsAndCounted) {
  const std::string dir = image_folder("undecodable", 3, 2);
  eval::ReferenceOptions o;
  o.format = DataFormat::Folder;
  o.resolution = 32;
  o.channels = 3;
  o.batch = 4;
  o.workers = 1;
  const MeanNet net;
  const metrics::Features f = eval::data_features(dir, o, net, false);
  EXPECT_EQ(f.pool.size(0), 6);
  EXPECT_EQ(f.labels.size(0), 6);
  EXPECT_DOUBLE_EQ(f.pool.min().item<double>(), 1.0);  // no black image among them
}

// 24.7: `sample -n 100 --per-class 1` ignored -n; `sample --overwrite -n 50` over 200 earlier
// images said "wrote 50" and left 200.
TEST(NothingLost, SampleCountsAndOverwriteMeanWhatTheySay) {
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

// 24.7: `classifier train --lr 1e30` wrote a NaN classifier and exited 0.
TEST(NothingLost, ADivergedClassifierIsNotWritten) {
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
  // 24.8: one undecodable image failed with "Inplace update to inference tensor outside
  // InferenceMode"; it is left out now.
  const std::string junk = image_folder("clf_junk", 8, 1);
  for (int k = 0; k < 8; ++k) write_png(junk + "/b/" + std::to_string(k) + ".png", torch::zeros({32, 32, 3}, torch::kUInt8));
  test::run_cli(cli::classifier, "classifier",
                {"train", "--data", junk, "--out", out, "--epochs", "2", "--batch", "4", "--width", "4", "--feature-dim",
                 "8", "--resolution", "32", "--channels", "3", "--threads", "1", "--workers", "1", "--holdout", "0.25"});
  EXPECT_TRUE(fs::exists(out));
}

// 24.7: two `fid --run` on one run at once appended every row twice.
TEST(NothingLost, OneScorerPerRunAtATime) {
  const std::string run = fresh("scorer");
  fs::create_directories(run + "/checkpoints");
  const io::DirLock other(run, ".fid.lock");
  eval::RunScoreOptions o;
  o.run_dir = run;
  const std::string e = test::error_of([&] { eval::score_run(o, eval::Reference{}, MeanNet{}, std::cerr); });
  EXPECT_NE(e.find("in use by another hamgan process"), std::string::npos) << e;
  EXPECT_NE(e.find(".fid.lock"), std::string::npos) << e;
  const io::DirLock training(run);  // training's own lock is another file: scoring a run while it trains
}

// 24.8: `train.beta1=1` failed in the optimizer without a key, `train.adam_eps=0` diverged at
// iteration 1, `eval.fid_n=4294967296` failed only in `fid`: config errors naming the key now.
TEST(NothingLost, SettingsThatCannotWorkAreConfigErrorsNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train.beta1=1", "'train.beta1': expected a value in [0, 1)"},
      {"train.beta2=1", "'train.beta2': expected a value in [0, 1)"},
      {"train.adam_eps=0", "'train.adam_eps': expected a value > 0"},
      {"eval.fid_n=4294967296", "'eval.fid_n'"}};
  for (const auto& [ov, want] : cases) {
    const std::string e = test::error_of([&] { parse_config("model: {resolution: 32}\n", "c.yaml", {ov}); });
    EXPECT_NE(e.find(want), std::string::npos) << ov << ": " << e;
  }
  const std::string e = test::error_of([&] { parse_config("train: {[a, b]: 3}\n", "k.yaml"); });
  EXPECT_NE(e.find("k.yaml: a key under 'train'"), std::string::npos) << e;
}

// 24.7: a folder of which nearly every image is undecodable trained, with warnings only.
TEST(NothingLost, MostlyUndecodableTrainingDataIsAnError) {
  const std::string dir = image_folder("mostly_junk", 2, 30);
  DataConfig dc;
  dc.format = DataFormat::Folder;
  dc.path = dir;
  LoaderOptions lo;
  lo.batch_size = 2;
  lo.workers = 1;
  Loader loader(open_dataset(dc, 32, 3), lo);
  const std::string e = test::error_of([&] {
    for (int i = 0; i < 200; ++i) loader.next();
  });
  EXPECT_NE(e.find("could not be decoded"), std::string::npos) << e;
  // A few bad images among good ones still train.
  dc.path = image_folder("few_junk", 30, 1);
  Loader ok(open_dataset(dc, 32, 3), lo);
  for (int i = 0; i < 60; ++i) ok.next();
}

// 24 (ImageNet): CMYK JPEGs were skipped as undecodable ("Unsupported color conversion
// request"); they decode as PIL converts them to RGB. Same libjpeg-turbo as PIL here, so the
// inks are equal and the conversion is integer arithmetic: exact, tolerance 0.
TEST(NothingLost, CmykJpegsDecodeAsPilConvertsThem) {
  const torch::Tensor want = test::get(test::load_tensors(test::oracle_path("cmyk.pt")), "rgb");
  Image im;
  std::string why;
  ASSERT_TRUE(decode_image(test::oracle_path("cmyk.jpg"), 0, true, im, why)) << why;
  ASSERT_EQ(im.channels, 3);
  const torch::Tensor got =
      torch::from_blob(im.pixels.data(), {im.height, im.width, 3}, torch::kUInt8).clone();
  EXPECT_TRUE(test::close(got.to(torch::kDouble), want.to(torch::kDouble), 0, 0));
}

// 24.8: a PNG header declaring 60000 x 60000 said "unknown image type".
TEST(NothingLost, AHugePngSaysItsSize) {
  const std::string p = fresh("huge_png") + "/huge.png";
  std::vector<unsigned char> b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                  0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60, 8, 2, 0, 0, 0, 0, 0, 0, 0};
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  Image im;
  std::string why;
  EXPECT_FALSE(decode_image(p, 0, true, im, why));
  EXPECT_NE(why.find("declares 60000 x 60000 pixels"), std::string::npos) << why;
}

// 24.7: `bench context` with a case that cannot run printed the error as a table row and
// exited 0: the table is printed, then the command fails.
TEST(NothingLost, ABenchmarkWithFailedCasesFails) {
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

// 24.8: resuming with another data.path or batch size said "loader: start position epoch 0
// batch 20: expected batch in [0, 12)"; it names the data set's size and the keys to check.
TEST(NothingLost, ALoaderPositionThatDoesNotFitNamesTheKeys) {
  DataConfig dc;
  dc.format = DataFormat::Folder;
  dc.path = image_folder("resume_data", 12, 0);  // 24 images: 6 batches of 4 an epoch
  LoaderOptions lo;
  lo.batch_size = 4;
  lo.workers = 1;
  const std::string e = test::error_of([&] { Loader(open_dataset(dc, 32, 3), lo, LoaderState{0, 20}); });
  for (const char* part : {"the checkpoint stopped at batch 20 of epoch 0", "6 batches per epoch", "24 images",
                           "data.path, train.batch_size or the rank count differ", "config.yaml"})
    EXPECT_NE(e.find(part), std::string::npos) << part << ": " << e;
}

namespace {
// MeanNet that deletes `victim` the first time it sees images: a training run pruning the
// checkpoint `fid --run` is about to score.
struct PruningNet : MeanNet {
  std::string victim;
  mutable bool done = false;
  metrics::FeatureOutput features(const torch::Tensor& p, bool l) const override {
    if (!done) fs::remove(victim), done = true;
    return MeanNet::features(p, l);
  }
};
}  // namespace

// 24.8: `fid --run` while `train` pruned the run reported the deleted checkpoints as damaged.
TEST(NothingLost, ACheckpointPrunedWhileScoringIsNotDamaged) {
  const std::string run = fresh("pruned_run");
  fs::create_directories(run + "/checkpoints");
  for (int64_t it : {10, 20}) test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", it), it, true, 1,
                                                          test::tiny_checkpoint_yaml());
  PruningNet net;
  net.victim = checkpoint_path(run + "/checkpoints", 20);
  eval::Reference ref;
  ref.stats.mu = torch::zeros({1}, torch::kDouble);
  ref.stats.sigma = torch::eye(1, torch::kDouble);
  ref.no_kid_why = "no real features";
  eval::RunScoreOptions o;
  o.run_dir = run;
  o.n = 4;
  std::ostringstream log;
  std::vector<std::string> damaged;
  const auto rows = eval::score_run(o, ref, net, log, &damaged);
  EXPECT_EQ(rows.size(), 1u);
  EXPECT_TRUE(damaged.empty()) << log.str();
  EXPECT_NE(log.str().find("was deleted before it was scored (pruned by training?)"), std::string::npos) << log.str();
}

// 25: a model.n_classes that does not match the folder fails before the run directory is made
// (it used to fail after writing config.yaml), naming the count to set.
TEST(NothingLost, AWrongClassCountFailsBeforeTheRunDirectoryIsWritten) {
  const std::string data = image_folder("two_classes", 4, 0);
  const std::string out = test::fresh_dir("test_nothing_lost", "wrong_classes_run");  // not created
  const std::string e = test::error_of([&] {
    test::run_cli(cli::train, "train",
                  {"-c", test::source_path("configs/fmnist32_sagan.yaml"), "--out", out, "data.format=folder",
                   "data.path=" + data, "model.n_classes=5", "model.image_channels=3", "--threads", "1"});
  });
  EXPECT_NE(e.find("has 2 classes; set model.n_classes=2"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(out)) << "nothing written";
}
