// What a score is asked for is done, or refused at start-up naming the flag or config key that
// asked; never skipped without a word. Also what the scores may compare: a reference of the
// GAN's classes and channels, one sample count per scores.csv; every eval point of a run gets its
// row (after a killed or failed score, and over a stale row); and precision/recall/density/
// coverage over duplicated images say why they are 0.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gan/checkpoint/checkpoint.h"
#include "gan/cli/commands.h"
#include "gan/eval/score_table.h"
#include "gan/eval/train_scorer.h"
#include "io/png.h"
#include "metrics/classifier.h"
#include "metrics/prdc.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/random_classifier.h"
#include "support/tiny_checkpoint.h"
#include "support/tiny_run.h"

namespace test_scoring_requests {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_scoring_requests", name); }

std::string fid_error(const std::vector<std::string>& args) {
  return test::error_of([&] { test::run_cli(cli::fid, "fid", args); });
}

void expect_names(const std::string& e, const std::vector<std::string>& words) {
  for (const auto& w : words) EXPECT_NE(e.find(w), std::string::npos) << "'" << w << "' not in: " << e;
}

// A gray 32 px classifier of `classes` classes (random weights) whose file records a held-out
// accuracy clearly above chance: used without a word.
std::string classifier_file(int64_t classes = 3) {
  return test::write_random_classifier(fresh("clf" + std::to_string(classes)) + ".pt", classes);
}

const std::string& clf3() {
  static const std::string p = classifier_file(3);
  return p;
}

// `classes` class directories (none: a flat folder) of `per` 32 px noise images with `channels`
// channels.
std::string noise_folder(const std::string& name, int classes, int per, int channels) {
  const std::string d = fresh(name);
  auto gen = at::detail::createCPUGenerator(17);
  fs::create_directories(d);
  for (int c = 0; c < std::max(1, classes); ++c) {
    const std::string sub = classes > 0 ? d + "/00" + std::to_string(c) : d;
    fs::create_directories(sub);
    for (int k = 0; k < per; ++k)
      write_png(sub + "/" + std::to_string(k) + ".png",
                torch::randint(0, 256, {32, 32, channels}, gen, torch::kLong).to(torch::kUInt8));
  }
  return d;
}

// The tiny GAN's kind of images: 3 classes, gray.
const std::string& real3() {
  static const std::string d = noise_folder("real3", 3, 2, 1);
  return d;
}

std::string scorer_keys(const std::string& extra = "") {
  return "train.checkpoint_every=100 train.sample_every=0 eval.every=2 eval.n=6 eval.features=" +
         clf3() + " eval.real=" + real3() + (extra.empty() ? "" : " " + extra);
}

std::string scorer_error(const std::string& overrides, const std::string& dir_name = "scorer_error") {
  const Config cfg = test::tiny(overrides);
  return test::error_of([&] { eval::make_train_scorer(cfg, fresh(dir_name)); });
}

// train() into `dir` with `hook` as the scorer; its output discarded.
void train_with(const Config& cfg, const std::string& dir, EvalHook hook) {
  std::ostringstream sink;
  TrainOptions opt;
  opt.out_dir = dir;
  opt.out = &sink;
  opt.eval = std::move(hook);
  train(cfg, opt, test::synthetic(cfg));
}

std::vector<int64_t> iterations_of(const std::string& dir) {
  std::vector<int64_t> out;
  for (const auto& r : eval::read_run_scores(dir)) out.push_back(r.iteration);
  return out;
}

}  // namespace

// `hamgan fid`: a request it cannot honour is an error at start-up, never skipped (or noted)
// with exit 0, nor found only after the checkpoint and the reference were read. The checks come
// first: none of the files below needs to exist.
TEST(FidRequests, EveryRequestThatCannotBeHonouredFailsAtStartUp) {
  const std::string dir = real3();
  expect_names(fid_error({"--real", "ref.npz", "--checkpoint", "ck.pt", "--metrics", "fid,precision,recall"}),
               {"--metrics precision", "--real ref.npz", "statistics"});
  expect_names(fid_error({"--real", "ref.npz", "--fake", dir, "--metrics", "kid"}), {"--metrics kid", "--real ref.npz"});
  expect_names(fid_error({"--real", dir, "--fake", dir, "--metrics", "is", "--features", clf3()}),
               {"--metrics is", "--features", "class accuracy"});
  expect_names(fid_error({"--real", dir, "--fake", dir, "--metrics", "cas"}), {"--metrics cas", "--checkpoint"});
  expect_names(fid_error({"--real", dir, "--run", fresh("no_run"), "--metrics", "fid,cas"}), {"--metrics cas"});
  expect_names(fid_error({"--real", "ref.npz", "--checkpoint", "ck.pt", "--real-n", "5"}), {"--real-n 5", "ref.npz"});
  expect_names(fid_error({"--real", dir, "--fake", dir, "--real-n", "5"}), {"--real-n 5", "--fake"});
  expect_names(fid_error({"--real", dir, "--fake", dir, "--metrics", ""}), {"--metrics ''", "no metric"});
  expect_names(fid_error({"--real", dir, "--fake", dir, "--metrics", "fid,,kid"}), {"--metrics 'fid,,kid'", "empty"});
  const std::string flat = noise_folder("flat", 0, 3, 1);
  expect_names(fid_error({"--real", flat, "--checkpoint", "ck.pt", "--metrics", "ifid"}),
               {"--metrics ifid", "--real " + flat, "class directories"});
}

// eval.*: the same checks before training starts, naming the config key (not a flag that
// was never passed).
TEST(TrainRequests, EveryKeyThatCannotBeHonouredFailsAtStartUp) {
  // An unknown metric: refused when the config is read (the registry's names).
  std::string e = test::error_of([] { test::tiny(scorer_keys("eval.metrics=bogus")); });
  expect_names(e, {"key 'eval.metrics'", "unknown metric 'bogus'", "fid, is, kid"});
  EXPECT_EQ(e.find("--metrics"), std::string::npos) << e;
  expect_names(scorer_error(scorer_keys("eval.metrics=fid,cas")), {"eval.metrics cas", "scores.csv"});
  expect_names(scorer_error(scorer_keys("eval.metrics=fid,is")), {"eval.metrics is", "eval.features"});
  // An .npz reference has no features for precision: asking for it and ranking by it is an
  // error, not a run that never computes precision and never keeps a best checkpoint.
  e = scorer_error("eval.every=2 eval.real=ref.npz eval.metrics=fid,precision,recall eval.best_metric=precision");
  expect_names(e, {"eval.metrics precision", "eval.real ref.npz"});
  const std::string flat = noise_folder("flat_real", 0, 6, 1);
  expect_names(scorer_error(scorer_keys("eval.metrics=fid,ifid eval.real=" + flat)),
               {"eval.metrics ifid", "eval.real " + flat});
}

// eval.real must hold what the GAN draws (3 gray classes here); so must the classifier.
TEST(TrainRequests, AReferenceOrClassifierOfOtherClassesOrChannelsIsRefused) {
  EXPECT_EQ(scorer_error(scorer_keys()), "(no error)");
  const std::string two = noise_folder("two_classes", 2, 3, 1);
  expect_names(scorer_error(scorer_keys("eval.real=" + two)),
               {"eval.real " + two, "2 classes", "draws 3", "model.n_classes"});
  const std::string rgb = noise_folder("rgb", 3, 2, 3);
  expect_names(scorer_error(scorer_keys("eval.real=" + rgb)),
               {"eval.real " + rgb, "colour images", "gray", "model.image_channels 1"});
  const std::string four = classifier_file(4);
  expect_names(scorer_error(scorer_keys("eval.features=" + four)),
               {"eval.features " + four, "4 classes", "draws 3"});
}

// One sample count per table: a resumed run with another eval.n, or `fid --run` with
// another -n, is refused rather than mixing rows (and picking the best across them).
TEST(TrainRequests, AnotherSampleCountThanTheTablesIsRefused) {
  const std::string dir = fresh("eval_n");
  fs::create_directories(dir + "/checkpoints");
  eval::ScoreRow r;
  r.iteration = 10, r.values["fid"] = 5, r.n = 50, r.seconds = 1;
  r.net = metrics::ClassifierExtractor(clf3(), torch::kCPU).identity();
  eval::append_run_score(dir, r);
  const Config cfg = test::tiny(scorer_keys());
  expect_names(test::error_of([&] { eval::make_train_scorer(cfg, dir); }),
               {"scores.csv", "iteration 10", "50 samples", "eval.n asks for 6", "eval.n 50"});
  test::write_tiny_checkpoint(checkpoint_path(dir + "/checkpoints", 20), 20, true, 1, test::tiny_checkpoint_yaml());
  expect_names(fid_error({"--real", real3(), "--run", dir, "-n", "6", "--features", clf3(), "--threads", "1"}),
               {"50 samples", "-n asks for 6"});
  EXPECT_EQ(eval::read_run_scores(dir).size(), 1u);
}

// A score killed (no row) or failed (an error) leaves checkpoint 2 unscored; the resumed run
// scores it at its first eval, so the table and the best checkpoint consider it.
TEST(TrainScorer, ACheckpointLeftUnscoredIsScoredOnResume) {
  const std::vector<std::pair<std::string, EvalHook>> first_sessions = {
      {"killed", [](int64_t, const std::string&, const PhaseProgress::Say&, TensorBoardLog*, const EvalRanks&) {}},
      {"failed", [](int64_t, const std::string&, const PhaseProgress::Say&, TensorBoardLog*, const EvalRanks&) { fail("the score failed"); }}};
  for (const auto& [name, hook] : first_sessions) {
    SCOPED_TRACE(name);
    const std::string dir = fresh("gap_" + name);
    const Config first = test::tiny(scorer_keys("train.iterations=2"));
    try {
      train_with(first, dir, hook);
    } catch (const Error&) {
    }
    ASSERT_TRUE(fs::exists(checkpoint_path(dir + "/checkpoints", 2)));
    EXPECT_TRUE(iterations_of(dir).empty());
    const Config second = test::tiny(scorer_keys("train.iterations=4"));
    train_with(second, dir, eval::make_train_scorer(second, dir));
    EXPECT_EQ(iterations_of(dir), (std::vector<int64_t>{2, 4}));
  }
}

// A row for iteration 2 that predates this run's checkpoint 2 (stale, or made by hand) is
// replaced by that checkpoint's score; a finished run resumed keeps its rows as they are.
TEST(TrainScorer, ARowOlderThanItsCheckpointIsReplaced) {
  const std::string dir = fresh("stale");
  fs::create_directories(dir);
  eval::ScoreRow stale;
  stale.iteration = 2, stale.values["fid"] = 12345, stale.n = 6, stale.seconds = 1;
  stale.net = metrics::ClassifierExtractor(clf3(), torch::kCPU).identity();
  eval::append_run_score(dir, stale);
  const Config cfg = test::tiny(scorer_keys("train.iterations=2"));
  train_with(cfg, dir, eval::make_train_scorer(cfg, dir));
  auto rows = eval::read_run_scores(dir);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].iteration, 2);
  EXPECT_NE(rows[0].value("fid"), 12345.0) << "the stale row was kept";
  EXPECT_TRUE(std::isfinite(rows[0].value("fid")));
  const double scored = rows[0].value("fid");
  train_with(cfg, dir, eval::make_train_scorer(cfg, dir));  // finished: only the end's score, already there
  rows = eval::read_run_scores(dir);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].value("fid"), scored);
}

// Ten copies of one image: every k-NN radius is 0, so the four numbers are 0 by definition; the
// definition stays (it is the published one) and the sets are named in a warning.
TEST(PrdcDuplicates, ZeroRadiiAreNamedInAWarning) {
  const torch::Tensor copies = torch::ones({10, 8}) * 3;
  const metrics::Prdc p = metrics::precision_recall_density_coverage(copies, copies);
  EXPECT_EQ(p.precision, 0.0);
  EXPECT_EQ(p.coverage, 0.0);
  ASSERT_EQ(p.warnings.size(), 2u);
  expect_names(p.warnings[0], {"real features (10 points)", "10 for precision (k 3)", "10 for density and coverage (k 5)"});
  expect_names(p.warnings[1], {"fake features (10 points)", "10 for recall (k 3)"});
  torch::manual_seed(1);
  EXPECT_TRUE(metrics::precision_recall_density_coverage(torch::randn({20, 8}), torch::randn({20, 8})).warnings.empty());

  const std::string dup = fresh("dup");
  fs::create_directories(dup + "/000");
  const torch::Tensor img = torch::full({32, 32, 1}, 90, torch::kUInt8);
  for (int k = 0; k < 10; ++k) write_png(dup + "/000/" + std::to_string(k) + ".png", img);
  const std::string out = test::run_cli(
      cli::fid, "fid", {"--real", dup, "--fake", dup, "--metrics", "precision,recall,density,coverage", "--features", clf3(), "--threads", "1"});
  expect_names(out, {"warning: precision/recall/density/coverage: the real features of " + dup, "fake features"});
}

// The reading flags of `fid` and `fid stats` are checked as flags: an error names --channels or
// --resolution as the user wrote it, not the config key (model.*) the data layer reads with.
TEST(FidRequests, ReadingFlagsOutOfRangeNameTheFlag) {
  const std::string fake = noise_folder("fake_for_flags", 3, 2, 1);
  for (const std::vector<std::string>& flag :
       {std::vector<std::string>{"--channels", "2"}, {"--resolution", "7"}, {"--batch", "0"}, {"-n", "-1"}}) {
    std::vector<std::string> score = {"--real", real3(), "--fake", fake, "--features", clf3(), "--threads", "1"};
    std::vector<std::string> stats = {"stats", "--data", real3(), "--out", fresh("flags") + ".npz", "--features", clf3()};
    score.insert(score.end(), flag.begin(), flag.end());
    stats.insert(stats.end(), flag.begin(), flag.end());
    for (const auto& args : {score, stats}) {
      const std::string e = fid_error(args);
      expect_names(e, {flag[0] + " " + flag[1], "expected"});
      EXPECT_EQ(e.find("model."), std::string::npos) << e;
    }
  }
  EXPECT_FALSE(fs::exists(fresh("flags") + ".npz"));
}

// A fake set that cannot be scored (fewer than 2 images for a covariance) fails naming the set
// before the reference is read: here the reference does not even exist, and the error is still
// about the fakes.
TEST(FidRequests, AFakeSetOfOneImageFailsBeforeTheReference) {
  const std::string one = fresh("one_fake");
  fs::create_directories(one);
  write_png(one + "/0.png", torch::zeros({32, 32, 1}, torch::kUInt8));
  const std::string missing = fresh("no_reference_here") + "/absent";
  std::string e = fid_error({"--real", missing, "--fake", one, "--features", clf3(), "--threads", "1"});
  expect_names(e, {"--fake " + one, "1 image", "at least 2"});
  EXPECT_EQ(e.find(missing), std::string::npos) << e;
  const std::string six = noise_folder("six_fakes", 3, 2, 1);
  e = fid_error({"--real", missing, "--fake", six, "-n", "1", "--features", clf3(), "--threads", "1"});
  expect_names(e, {"--fake " + six, "-n 1", "at least 2"});
  EXPECT_EQ(e.find(missing), std::string::npos) << e;
  // With a reference that exists, two images score.
  e = fid_error({"--real", real3(), "--fake", six, "-n", "2", "--features", clf3(), "--threads", "1"});
  EXPECT_EQ(e, "(no error)");
}

// A file in checkpoints/ named like a best checkpoint but of an iteration no int64 holds is not
// one of ours: the scorer leaves it alone and training goes on (it stopped with "error: stoll").
TEST(TrainScorer, AStrayBestCheckpointNameIsLeftAlone) {
  const std::string dir = fresh("stray_best");
  fs::create_directories(dir + "/checkpoints");
  const std::string stray = dir + "/checkpoints/best_ckpt_99999999999999999999.pt";
  std::ofstream(stray) << "not ours";
  const Config cfg = test::tiny(scorer_keys("train.iterations=2"));
  train_with(cfg, dir, eval::make_train_scorer(cfg, dir));
  EXPECT_EQ(iterations_of(dir), std::vector<int64_t>{2});
  EXPECT_TRUE(fs::exists(stray));
  EXPECT_TRUE(fs::exists(dir + "/checkpoints/best_ckpt_000000002.pt"));
}

}  // namespace test_scoring_requests
