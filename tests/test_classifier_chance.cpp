// A domain classifier no better than chance must not pass for a measurement. "Clearly above
// chance" (metrics/classifier.h): a one-sided exact binomial test at 1% against the best constant
// guess, and at least a twentieth of the way from chance to perfect. `classifier train` sizes its
// training in optimizer steps (a small folder's few epochs are a handful of steps), holds out
// enough images to tell, writes only a classifier that passes, and says clearly when a folder is
// too small; a file that fails the rule (an older one) is refused where it is used.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <filesystem>

#include "gan/cli/commands.h"
#include "gan/eval/train_scorer.h"
#include "io/png.h"
#include "metrics/classifier.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/tiny_run.h"

namespace test_classifier_chance {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_classifier_chance", name); }
// A file path beside the fresh folders, removed first: a rerun starts from nothing too.
std::string fresh_file(const std::string& name, const std::string& ext) {
  const std::string p = fresh(name) + ext;
  std::filesystem::remove(p);
  return p;
}

void expect_names(const std::string& e, const std::vector<std::string>& words) {
  for (const auto& w : words) EXPECT_NE(e.find(w), std::string::npos) << "'" << w << "' not in: " << e;
}

// 3 class directories of `per` 16 px gray images: class 0 bright on top, class 1 bright below,
// class 2 an even mid-gray, each with a little noise; `same`: every image the same mid-gray.
std::string folder(const std::string& name, int per, bool same) {
  const std::string dir = fresh(name);
  auto gen = at::detail::createCPUGenerator(3);
  for (int c = 0; c < 3; ++c) {
    const std::string sub = dir + "/00" + std::to_string(c);
    fs::create_directories(sub);
    for (int k = 0; k < per; ++k) {
      torch::Tensor px = torch::full({16, 16, 1}, 120, torch::kLong);
      if (!same) {
        px += torch::randint(0, 20, {16, 16, 1}, gen, torch::kLong);
        if (c == 0) px.narrow(0, 0, 8).fill_(230), px.narrow(0, 8, 8).fill_(10);
        if (c == 1) px.narrow(0, 0, 8).fill_(10), px.narrow(0, 8, 8).fill_(230);
      }
      write_png(sub + "/" + std::to_string(k) + ".png", px.clamp(0, 255).to(torch::kUInt8));
    }
  }
  return dir;
}

std::vector<std::string> train_args(const std::string& data, const std::string& out, std::vector<std::string> more) {
  std::vector<std::string> a = {"train", "--data", data, "--out", out, "--resolution", "16", "--channels", "1",
                                "--width", "4", "--feature-dim", "8", "--lr", "0.005", "--threads", "1",
                                "--workers", "1"};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::string clf_cli(const std::vector<std::string>& args) { return test::run_cli(cli::classifier, "classifier", args); }

// A classifier file (random weights, 32 px gray) recording the given held-out result.
std::string classifier_file(const std::string& name, int64_t classes, double accuracy, int64_t n, double chance) {
  metrics::ClassifierOptions o;
  o.resolution = 32, o.channels = 1, o.n_classes = classes, o.width = 4, o.feature_dim = 8;
  metrics::DomainClassifier net(o);
  metrics::ClassifierInfo info;
  info.data = "test";
  info.test_accuracy = accuracy, info.test_n = n, info.chance = chance;
  const std::string p = fresh(name) + ".pt";
  metrics::save_classifier(p, net, info);
  return p;
}

}  // namespace

TEST(ChanceRule, BinomialTailAndVerdicts) {
  EXPECT_NEAR(metrics::binomial_upper_tail(2, 24, 0.1), 0.7075230420514679, 1e-12);
  EXPECT_NEAR(metrics::binomial_upper_tail(24, 24, 1.0 / 3), std::pow(3.0, -24), 1e-20);
  EXPECT_EQ(metrics::binomial_upper_tail(0, 24, 0.1), 1.0);
  EXPECT_FALSE(metrics::chance_verdict(2, 24, 0.1).above) << "the README walkthrough's 0.0833 of 10 classes";
  EXPECT_TRUE(metrics::chance_verdict(24, 24, 1.0 / 3).above);
  // One mistake in 8 at chance 3/8 passes; two do not.
  EXPECT_TRUE(metrics::chance_verdict(7, 8, 0.375).above);
  EXPECT_FALSE(metrics::chance_verdict(6, 8, 0.375).above);
  // 0.11 against 0.10 on 10,000 images is significant, and useless: the effect bound refuses it.
  const metrics::ChanceVerdict big = metrics::chance_verdict(1100, 10000, 0.1);
  EXPECT_LT(big.p_value, metrics::kChanceAlpha);
  EXPECT_FALSE(big.above);
  EXPECT_NEAR(big.needed, 0.145, 1e-12);
  EXPECT_EQ(metrics::min_images_to_beat_chance(2), 12);
  EXPECT_EQ(metrics::min_images_to_beat_chance(3), 8);
  EXPECT_EQ(metrics::min_images_to_beat_chance(4), 7);
  EXPECT_EQ(metrics::min_images_to_beat_chance(10), 5);
  EXPECT_EQ(metrics::min_images_to_beat_chance(1000), 5);
}

// Images that do not differ between classes: whatever the training, the classifier answers one
// class for all, at most chance. Nothing is written.
TEST(ClassifierTrainChance, AClassifierAtChanceIsNotWritten) {
  const std::string data = folder("same", 10, true);
  const std::string out = fresh_file("same_out", ".pt");
  const std::string e = test::error_of([&] { clf_cli(train_args(data, out, {"--epochs", "2", "--batch", "10"})); });
  expect_names(e, {"not clearly above chance", "nothing written to " + out, "--steps"});
  EXPECT_FALSE(fs::exists(out));
}

// 18 images, `--epochs 1`: one step of batch 17 and one held-out image before, which could show
// nothing. Now at least 200 steps, 8 held out (the fewest that can show 3 classes apart), and a
// classifier that passes, recording what it passed on.
TEST(ClassifierTrainChance, ASmallFolderGetsEnoughStepsAndHeldOutImages) {
  const std::string data = folder("small", 6, false);
  const std::string out = fresh_file("small_out", ".pt");
  const std::string printed = clf_cli(train_args(data, out, {"--epochs", "1"}));
  expect_names(printed, {"on the held-out split (8 images; trained on 10) after 200 steps", "clearly above it"});
  metrics::ClassifierInfo info;
  metrics::load_classifier(out, &info);
  EXPECT_EQ(info.test_n, 8);
  EXPECT_GE(info.test_accuracy, 7.0 / 8);
  EXPECT_NEAR(info.chance, 3.0 / 8, 1e-12);  // the held-out split's largest class: 3 of 8
  EXPECT_NO_THROW(metrics::ClassifierExtractor(out, torch::kCPU));
  // --steps sizes it exactly.
  const std::string exact = fresh_file("small_steps", ".pt");
  expect_names(clf_cli(train_args(data, exact, {"--steps", "250"})), {"after 250 steps"});
}

TEST(ClassifierTrainChance, TooSmallOrContradictoryRequestsAreClearErrors) {
  const std::string tiny = folder("tiny", 3, false);
  const std::string out = fresh_file("tiny_out", ".pt");
  expect_names(test::error_of([&] { clf_cli(train_args(tiny, out, {})); }),
               {"9 images of 3 classes", "needs 8", "at least 10 images"});
  EXPECT_FALSE(fs::exists(out));
  const std::string data = folder("flags", 6, false);
  expect_names(test::error_of([&] { clf_cli(train_args(data, out, {"--epochs", "0"})); }), {"--epochs 0; expected >= 1"});
  EXPECT_EQ(test::error_of([&] { clf_cli(train_args(data, out, {"--epochs", "0"})); }).find("batch"), std::string::npos);
  expect_names(test::error_of([&] { clf_cli(train_args(data, out, {"--epochs", "2", "--steps", "5"})); }),
               {"--epochs and --steps"});
  EXPECT_FALSE(fs::exists(out));
}

// A file that records an accuracy at chance (as `classifier train` wrote them before) is refused
// wherever it would score: the feature network, `fid`, scoring while training.
TEST(ClassifierAtUse, AFileAtChanceIsRefusedAndOneWithoutAnAccuracyIsFlagged) {
  const std::string old_style = classifier_file("old", 10, 2.0 / 24, 0, -1);  // no held-out size recorded
  expect_names(test::error_of([&] { metrics::ClassifierExtractor(old_style, torch::kCPU); }),
               {old_style, "0.0833", "not clearly above chance"});
  const std::string recorded = classifier_file("recorded", 10, 2.0 / 24, 24, 0.1);
  expect_names(test::error_of([&] { metrics::ClassifierExtractor(recorded, torch::kCPU); }),
               {recorded, "2 of 24 right", "not clearly above chance"});
  const std::string images = folder("use_images", 2, false);
  expect_names(test::error_of([&] {
                 test::run_cli(cli::fid, "fid", {"stats", "--images", images, "--out", fresh_file("stats", ".npz"),
                                                 "--features", recorded, "--threads", "1"});
               }),
               {recorded, "not clearly above chance"});
  const Config cfg = test::tiny("eval.every=2 eval.features=" + recorded);
  expect_names(test::error_of([&] { eval::make_train_scorer(cfg, fresh("scorer")); }),
               {recorded, "not clearly above chance"});

  EXPECT_NO_THROW(metrics::ClassifierExtractor(classifier_file("good", 3, 1.0, 30, 1.0 / 3), torch::kCPU));
  testing::internal::CaptureStderr();
  EXPECT_NO_THROW(metrics::ClassifierExtractor(classifier_file("unknown", 3, -1, 0, -1), torch::kCPU));
  expect_names(testing::internal::GetCapturedStderr(), {"warning:", "records no held-out accuracy"});
}

}  // namespace test_classifier_chance
