// `hamgan fid --test-split`: a data source's own test images scored as a checkpoint's samples
// are. The oracle is the folder route that reads PNGs instead of IDX files: the same test and
// training images written as class folders (28x28 padded with 2 black pixels to 32, as the
// loader pads) and scored with `--fake` must give the same figures. Also: -n chooses a
// class-balanced subset of the test split and as many training images; a source without a test
// split, an .npz or a second form is refused naming it; `fid --run` keeps the same figures for
// its sample count in DIR/real_scores.csv and draws them in scores.png.
#include <gtest/gtest.h>
#include <zlib.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "gan/cli/commands.h"
#include "gan/eval/real_scores.h"
#include "gan/eval/score_table.h"
#include "gan/eval/train_scorer.h"
#include "gan/train/trainer.h"
#include "io/decode.h"
#include "io/png.h"
#include "plot/line_plot.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/tiny_checkpoint.h"
#include "support/tiny_run.h"

namespace test_fid_test_split {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

constexpr int kClasses = 10;

std::string fresh(const std::string& name) { return test::created_dir("test_fid_test_split", name); }

// One IDX file, gzip-compressed as Fashion-MNIST ships it: `dims` after the magic, then `data`.
void write_idx(const std::string& path, uint8_t ndim, const std::vector<int32_t>& dims, const std::vector<uint8_t>& data) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  const uint8_t magic[4] = {0, 0, 8, ndim};
  gzwrite(f, magic, 4);
  for (const int32_t d : dims) {
    const uint8_t be[4] = {uint8_t(d >> 24), uint8_t(d >> 16), uint8_t(d >> 8), uint8_t(d)};
    gzwrite(f, be, 4);
  }
  gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
  gzclose(f);
}

struct Split {
  torch::Tensor images;  // [N, 28, 28] uint8
  std::vector<int64_t> labels;
};

// `per` images of each class: a bright band whose rows tell the class, over smooth noise of
// amplitude `noise` that makes every image its own. The test split is noisier than the training
// one, so that its figures are not all 0 or 1.
Split make_split(int per, uint64_t seed, double noise) {
  auto gen = at::detail::createCPUGenerator(seed);
  Split s;
  std::vector<torch::Tensor> ims;
  for (int k = 0; k < per; ++k)
    for (int c = 0; c < kClasses; ++c) {
      torch::Tensor im = torch::upsample_bilinear2d(torch::rand({1, 1, 7, 7}, gen) * noise, {28, 28}, false).squeeze();
      im.slice(0, 2 * c, 2 * c + 8) += 60 + 80 * torch::rand({1}, gen);
      ims.push_back(im.round().clamp(0, 255).to(torch::kUInt8));
      s.labels.push_back(c);
    }
  s.images = torch::stack(ims);
  return s;
}

void write_fmnist(const std::string& dir, const std::string& prefix, const Split& s) {
  const auto n = static_cast<int32_t>(s.labels.size());
  const torch::Tensor px = s.images.contiguous();
  write_idx(dir + "/" + prefix + "-images-idx3-ubyte.gz", 3, {n, 28, 28},
            std::vector<uint8_t>(px.data_ptr<uint8_t>(), px.data_ptr<uint8_t>() + px.numel()));
  std::vector<uint8_t> y(s.labels.begin(), s.labels.end());
  write_idx(dir + "/" + prefix + "-labels-idx1-ubyte.gz", 1, {n}, y);
}

// DIR/00<c>/<k>.png: the images padded to 32 as the Fashion-MNIST loader pads them.
void write_folder(const std::string& dir, const Split& s) {
  for (size_t i = 0; i < s.labels.size(); ++i) {
    const std::string sub = dir + "/00" + std::to_string(s.labels[i]);
    fs::create_directories(sub);
    const torch::Tensor padded = torch::constant_pad_nd(s.images[static_cast<int64_t>(i)], {2, 2, 2, 2}, 0);
    write_png(sub + "/" + std::to_string(i) + ".png", padded.unsqueeze(2).contiguous());
  }
}

// A small classifier trained on the source's training images (`hamgan classifier train`).
std::string classifier(const std::string& data) {
  const std::string p = fresh("clf") + "/clf.pt";
  test::run_cli(cli::classifier, "classifier",
                {"train", "--data", data, "--out", p, "--steps", "200", "--batch", "20", "--width", "4",
                 "--feature-dim", "8", "--threads", "1", "--workers", "1"});
  return p;
}

// "fid 12.3\nprecision 0.71 (k 3)\n..." -> {fid: 12.3, precision: 0.71, ...}.
std::map<std::string, double> scores_of(const std::string& out) {
  std::map<std::string, double> m;
  std::istringstream in(out);
  std::string name;
  double v = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    if (l >> name >> v) m[name] = v;
  }
  return m;
}

struct Source {
  std::string fmnist, train_png, test_png, clf;
};

const Source& source() {
  static const Source s = [] {
    Source r;
    r.fmnist = fresh("fmnist"), r.train_png = fresh("train_png"), r.test_png = fresh("test_png");
    const Split train = make_split(4, 1, 100), test = make_split(3, 2, 220);
    write_fmnist(r.fmnist, "train", train);
    write_fmnist(r.fmnist, "t10k", test);
    write_folder(r.train_png, train);
    write_folder(r.test_png, test);
    r.clf = classifier(r.fmnist);
    return r;
  }();
  return s;
}

const char* kMetrics = "fid,precision,recall,density,coverage,class_acc";

}  // namespace

TEST(FidTestSplit, ScoresAsTheSameImagesReadFromPngFolders) {
  const Source& s = source();
  // Every image on both sides: the folder route's -n 0 takes all 30 test and 40 training PNGs;
  // --test-split takes all 30 test images, and --real-n 40 every training image.
  const auto split = scores_of(test::run_cli(cli::fid, "fid",
                                             {"--real", s.fmnist, "--test-split", "--real-n", "40", "--features", s.clf,
                                              "--metrics", kMetrics, "--threads", "1"}));
  const auto folder = scores_of(test::run_cli(
      cli::fid, "fid",
      {"--real", s.train_png, "--fake", s.test_png, "--features", s.clf, "--metrics", kMetrics, "--threads", "1"}));
  for (const char* m : {"fid", "precision", "recall", "density", "coverage", "class_acc"}) {
    ASSERT_TRUE(split.count(m)) << m << " not printed by --test-split";
    ASSERT_TRUE(folder.count(m)) << m << " not printed by --fake";
  }
  // The same pixels through the same network; only the order of images differs (sums in
  // float32), so FID to 1e-3 relative and the counting metrics exactly.
  EXPECT_NEAR(split.at("fid"), folder.at("fid"), 1e-3 * std::abs(folder.at("fid")) + 1e-4);
  for (const char* m : {"precision", "recall", "density", "coverage", "class_acc"}) EXPECT_EQ(split.at(m), folder.at(m)) << m;
  EXPECT_GT(split.at("fid"), 0.0);
}

TEST(FidTestSplit, CountChoosesBothSidesClassBalanced) {
  const Source& s = source();
  // -n 20: 2 test images per class, and 20 training images as reference.
  std::ostringstream err;
  auto* old = std::cerr.rdbuf(err.rdbuf());
  const auto scores = scores_of(test::run_cli(
      cli::fid, "fid",
      {"--real", s.fmnist, "--test-split", "-n", "20", "--features", s.clf, "--metrics", kMetrics, "--threads", "1"}));
  std::cerr.rdbuf(old);
  test::expect_names(err.str(), {"(test split): 20 of 30 images, class-balanced (2 per class, 10 classes)",
                                 s.fmnist + ": 20 of 40 images, class-balanced (2 per class, 10 classes)"});
  EXPECT_TRUE(scores.count("coverage") && scores.count("class_acc"));
  // More test images than there are: an error naming -n and the count.
  test::expect_names(test::fid_error({"--real", s.fmnist, "--test-split", "-n", "31", "--features", s.clf}),
                     {"-n 31", "(test split) has only 30 images"});
}

TEST(FidTestSplit, WhatHasNoTestSplitIsRefusedNamingIt) {
  const Source& s = source();
  test::expect_names(test::fid_error({"--real", s.train_png, "--test-split", "--features", s.clf, "--threads", "1"}),
                     {"--test-split", "--real " + s.train_png, "has no test split", "t10k"});
  test::expect_names(test::fid_error({"--real", "ref.npz", "--test-split", "--features", s.clf}),
                     {"--test-split", "--real ref.npz", "statistics"});
  test::expect_names(test::fid_error({"--real", s.fmnist, "--test-split", "--fake", s.test_png}),
                     {"one of", "--test-split"});
  test::expect_names(test::fid_error({"--real", s.fmnist, "--test-split", "--metrics", "cas", "--features", s.clf}),
                     {"--metrics cas", "--test-split", "--checkpoint"});
  // Without the test files the source has no test split either.
  const std::string only_train = fresh("only_train");
  for (const char* f : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"})
    fs::copy_file(s.fmnist + "/" + f, only_train + "/" + f);
  test::expect_names(test::fid_error({"--real", only_train, "--test-split", "--features", s.clf, "--threads", "1"}),
                     {"--real " + only_train, "has no test split"});
}

// Whether the PNG at `path` has a pixel of colour `c` (a line of the palette's).
bool has_line(const std::string& path, std::array<uint8_t, 3> c) {
  const Image png = decode_image(path);
  for (size_t i = 0; i + 2 < png.pixels.size(); i += static_cast<size_t>(png.channels))
    if (png.pixels[i] == c[0] && png.pixels[i + 1] == c[1] && png.pixels[i + 2] == c[2]) return true;
  return false;
}

// `fid --run` on a data source with a test split writes the test images' figures for the run's
// sample count into DIR/real_scores.csv (what --test-split prints for that count), once, and
// scores.png draws them as a second line; a folder reference has no test split and no file.
TEST(FidTestSplit, ARunScoredOnTheSourceGetsTheRealImagesFiguresAndLine) {
  const Source& s = source();
  const std::string run = fresh("run");
  const std::string yaml =
      "model: {resolution: 32, n_classes: 10, image_channels: 1}\n"
      "generator: {ch: 4, z_dim: 8}\n"
      "discriminator: {ch: 4}\n"
      "train: {batch_size: 4, device: cpu, ema_standing_batches: 0}\n";
  test::write_tiny_checkpoint(run + "/checkpoints/ckpt_000000010.pt", 10, true, 1, yaml);
  const std::vector<std::string> score = {"--real", s.fmnist, "--run", run, "--features", s.clf, "-n", "20",
                                          "--metrics", kMetrics, "--threads", "1"};
  test::run_cli(cli::fid, "fid", score);
  const std::vector<eval::ScoreRow> real = eval::read_score_table(eval::real_scores_csv(run));
  ASSERT_EQ(real.size(), 1u);
  const auto printed = scores_of(test::run_cli(
      cli::fid, "fid",
      {"--real", s.fmnist, "--test-split", "-n", "20", "--features", s.clf, "--metrics", kMetrics, "--threads", "1"}));
  EXPECT_EQ(real[0].n, 20);
  for (const char* m : {"fid", "precision", "recall", "density", "coverage", "class_acc"})
    EXPECT_NEAR(real[0].value(m), printed.at(m), 1e-4 * std::abs(printed.at(m)) + 1e-6) << m;
  // Beside the samples' line (tab10 blue), the real images' (tab10 orange) in scores.png.
  EXPECT_TRUE(has_line(eval::scores_png(run), plot::plot_palette()[0]));
  EXPECT_TRUE(has_line(eval::scores_png(run), plot::plot_palette()[1])) << "no real-images line in " << eval::scores_png(run);
  // A second checkpoint: the file is kept as it is, not scored again.
  const auto written = fs::last_write_time(eval::real_scores_csv(run));
  test::write_tiny_checkpoint(run + "/checkpoints/ckpt_000000020.pt", 20, true, 2, yaml);
  test::run_cli(cli::fid, "fid", score);
  EXPECT_EQ(eval::read_run_scores(run).size(), 2u);
  EXPECT_EQ(fs::last_write_time(eval::real_scores_csv(run)), written);
  // The table fully scored with 20 samples: -n 30 is refused naming the counts, not answered
  // with "every checkpoint already has a row".
  std::vector<std::string> at30 = score, at40 = score;
  at30[7] = "30", at40[7] = "40";
  EXPECT_NE(test::fid_error(at30).find("-n asks for 30"), std::string::npos);
  // scores.csv moved aside, as that error advises, and scored again with 30 samples: the real
  // images' line is of 30 test images too, not the earlier row of 20 (FID's bias is another).
  fs::rename(eval::scores_csv(run), run + "/scores_n20.csv");
  test::run_cli(cli::fid, "fid", at30);
  ASSERT_EQ(eval::read_score_table(eval::real_scores_csv(run)).size(), 1u);
  EXPECT_EQ(eval::read_score_table(eval::real_scores_csv(run))[0].n, 30);
  EXPECT_TRUE(has_line(eval::scores_png(run), plot::plot_palette()[1]));
  // With 40 samples the 30 test images are too few for a line of the same count: none is drawn.
  fs::rename(eval::scores_csv(run), run + "/scores_n30.csv");
  test::run_cli(cli::fid, "fid", at40);
  EXPECT_FALSE(eval::real_scores_of(run, eval::read_run_scores(run)[0].net, 40));
  EXPECT_TRUE(has_line(eval::scores_png(run), plot::plot_palette()[0]));
  EXPECT_FALSE(has_line(eval::scores_png(run), plot::plot_palette()[1]));
  // Against a folder of images there is no test split: no file, one line.
  const std::string folder_run = fresh("folder_run");
  test::write_tiny_checkpoint(folder_run + "/checkpoints/ckpt_000000010.pt", 10, true, 1, yaml);
  test::run_cli(cli::fid, "fid",
                {"--real", s.train_png, "--run", folder_run, "--features", s.clf, "-n", "20", "--metrics", kMetrics,
                 "--threads", "1"});
  EXPECT_EQ(eval::read_run_scores(folder_run).size(), 1u);
  EXPECT_FALSE(fs::exists(eval::real_scores_csv(folder_run)));
}

// The scorer in training keeps the same file: a tiny run of the source's 10 classes scored every
// 2 iterations against the source gets DIR/real_scores.csv, equal to what `fid --test-split`
// prints for its eval.n.
TEST(FidTestSplit, TheScorerInTrainingKeepsTheRealImagesFiguresToo) {
  const Source& s = source();
  const std::string run = fresh("trained");
  const Config cfg = test::tiny("model.n_classes=10 model.image_channels=1 train.iterations=2 train.checkpoint_every=100 "
                                "train.sample_every=0 eval.every=2 eval.n=20 eval.metrics=" + std::string(kMetrics) +
                                " eval.features=" + s.clf + " eval.real=" + s.fmnist);
  std::ostringstream sink;
  TrainOptions opt;
  opt.out_dir = run;
  opt.out = &sink;
  opt.eval = eval::make_train_scorer(cfg, run);
  train(cfg, opt, test::synthetic(cfg));
  EXPECT_EQ(eval::read_run_scores(run).size(), 1u);
  const std::vector<eval::ScoreRow> real = eval::read_score_table(eval::real_scores_csv(run));
  ASSERT_EQ(real.size(), 1u) << sink.str();
  const auto printed = scores_of(test::run_cli(
      cli::fid, "fid",
      {"--real", s.fmnist, "--test-split", "-n", "20", "--features", s.clf, "--metrics", kMetrics, "--threads", "1"}));
  for (const char* m : {"fid", "precision", "recall", "density", "coverage", "class_acc"})
    EXPECT_NEAR(real[0].value(m), printed.at(m), 1e-4 * std::abs(printed.at(m)) + 1e-6) << m;
  EXPECT_NE(sink.str().find("real test images: fid"), std::string::npos) << sink.str();
}

}  // namespace test_fid_test_split
