// Sampling: the truncated latent draw against scipy's truncnorm moments, seed determinism and
// batch-size independence, EMA vs G selection, class lists, the ImageFolder output of
// `hamgan sample` (layout, counts, no overwrite), the grid/interpolation pictures, and how
// `hamgan fid --fake` reads such a folder back (classes by folder number, hidden entries skipped).
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gan/cli/commands.h"
#include "gan/sample/classes.h"
#include "gan/sample/grid.h"
#include "gan/sample/image_folder.h"
#include "gan/sample/plan.h"
#include "gan/sample/sampler.h"
#include "gan/sample/truncated_normal.h"
#include "io/decode.h"
#include "io/image.h"
#include "io/png.h"
#include "metrics/classifier.h"
#include "metrics/image_dir.h"
#include "plot/labeled_grid.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/oracle.h"
#include "support/tiny_checkpoint.h"

namespace test_sample {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_sample", name); }

// A tiny checkpoint written once per process: G from seed 1, EMA G from seed 1001.
const std::string& checkpoint(bool ema = true) {
  static const std::string with = [] {
    const std::string p = fresh("ck") + "/ckpt_000000010.pt";
    test::write_tiny_checkpoint(p, 10, true, 1, test::tiny_checkpoint_yaml());
    return p;
  }();
  static const std::string without = [] {
    const std::string p = fresh("ck_noema") + "/ckpt_000000010.pt";
    test::write_tiny_checkpoint(p, 10, false, 1, test::tiny_checkpoint_yaml());
    return p;
  }();
  return ema ? with : without;
}

int run_cli(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return cli::sample_cmd(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

// 1e6 draws per T: every |z| <= T, and the sample mean and variance match the truncated
// normal's (scipy.stats.truncnorm(-T, T)) within 5 standard errors: SE(mean) = sqrt(var/N),
// SE(var) = sqrt((mu4 - var^2) / N).
TEST(Truncation, MomentsMatchScipyTruncnorm) {
  const auto o = test::load_tensors(test::oracle_path("truncnorm.pt"));
  const auto ts = test::get(o, "t"), var = test::get(o, "var"), mu4 = test::get(o, "mu4");
  const int64_t n = 1000000;
  for (int64_t i = 0; i < ts.size(0); ++i) {
    const double t = ts[i].item<double>(), v = var[i].item<double>(), m4 = mu4[i].item<double>();
    const torch::Tensor z = sample::truncated_normal(n, t, at::detail::createCPUGenerator(42 + i)).to(torch::kDouble);
    EXPECT_LE(z.abs().max().item<double>(), t) << "T = " << t;
    const double mean = z.mean().item<double>(), sv = z.var().item<double>();
    EXPECT_LT(std::abs(mean), 5 * std::sqrt(v / n)) << "T = " << t;
    EXPECT_LT(std::abs(sv - v), 5 * std::sqrt((m4 - v * v) / n)) << "T = " << t << ": var " << sv << " vs " << v;
  }
  // T <= 0: the plain standard normal (var 1, mu4 3).
  const torch::Tensor z = sample::truncated_normal(n, 0, at::detail::createCPUGenerator(7)).to(torch::kDouble);
  EXPECT_GT(z.abs().max().item<double>(), 4.0);
  EXPECT_LT(std::abs(z.var().item<double>() - 1), 5 * std::sqrt(2.0 / n));
}

TEST(Truncation, LatentDependsOnlyOnSeedClassAndIndex) {
  const auto a = sample::latent_for(3, 1, 5, 16, 0.7), b = sample::latent_for(3, 1, 5, 16, 0.7);
  EXPECT_TRUE(torch::equal(a, b));
  EXPECT_LE(a.abs().max().item<double>(), 0.7);
  EXPECT_FALSE(torch::equal(a, sample::latent_for(3, 1, 6, 16, 0.7)));
  EXPECT_FALSE(torch::equal(a, sample::latent_for(3, 2, 5, 16, 0.7)));
  EXPECT_FALSE(torch::equal(a, sample::latent_for(4, 1, 5, 16, 0.7)));
}

TEST(Classes, ParseAndValidate) {
  EXPECT_EQ(sample::parse_classes("all", 3), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(sample::parse_classes("2,0", 3), (std::vector<int64_t>{2, 0}));
  const std::string range = test::error_of([] { sample::parse_classes("0,3", 3); });
  EXPECT_NE(range.find("class 3 is out of range"), std::string::npos) << range;
  EXPECT_NE(range.find("0..2"), std::string::npos) << range;
  const std::string word = test::error_of([] { sample::parse_classes("0,x", 3); });
  EXPECT_NE(word.find("'x' is not a class index"), std::string::npos) << word;
  const std::string twice = test::error_of([] { sample::parse_classes("1,1", 3); });
  EXPECT_NE(twice.find("listed twice"), std::string::npos) << twice;
}

TEST(Plan, EvenSplitAndPerClass) {
  const auto p = sample::make_plan({0, 1, 2}, 7, 0);  // 3 + 2 + 2
  ASSERT_EQ(p.size(), 7u);
  EXPECT_EQ(p[2].cls, 0);
  EXPECT_EQ(p[3].cls, 1);
  EXPECT_EQ(p[3].k, 0);
  EXPECT_EQ(sample::make_plan({1}, 0, 4).size(), 4u);
}

TEST(Sampler, SameImagesForAnyBatchSize) {
  const CheckpointData c = load_checkpoint(checkpoint());
  std::ostringstream warn;
  sample::SamplerOptions o;
  o.seed = 5;
  o.truncation = 1.5;
  o.batch = 1;
  const sample::Sampler one(c, o, warn);
  o.batch = 5;
  const sample::Sampler five(c, o, warn);
  const auto items = sample::make_plan({0, 1, 2}, 7, 0);
  const torch::Tensor a = one.generate(items), b = five.generate(items);
  EXPECT_EQ(a.sizes(), (std::vector<int64_t>{7, 1, 32, 32}));
  // Eval-mode G treats samples independently; only the kernels' summation order may change.
  EXPECT_TRUE(test::close(b, a, 1e-5, 1e-6));
  // And a second sampler with the same seed reproduces it.
  EXPECT_TRUE(torch::equal(five.generate(items), b));
  EXPECT_TRUE(warn.str().empty()) << warn.str();
}

// A Hamburger with random initial D draws it per image from the seed, not from the device's RNG
// at every forward (which would tie its samples to the batch layout and the device): the same
// images for any batch size, and again on a second run.
TEST(Sampler, HamburgerSamplesDependOnNeitherBatchNorRun) {
  const std::string ck = test::fresh_dir("test_sample", "ham") + ".pt";
  test::write_tiny_checkpoint(ck, 10, true, 1,
                              "model: {resolution: 32, n_classes: 3, image_channels: 1}\n"
                              "generator: {ch: 8, z_dim: 8, context: {type: ham_nmf, resolution: 16}}\n"
                              "discriminator: {ch: 4}\n"
                              "train: {batch_size: 4, device: cpu, ema_standing_batches: 0}\n");
  const CheckpointData c = load_checkpoint(ck);
  std::ostringstream warn;
  sample::SamplerOptions o;
  o.seed = 5;
  o.batch = 1;
  const sample::Sampler one(c, o, warn);
  o.batch = 4;
  const sample::Sampler four(c, o, warn);
  const auto items = sample::make_plan({0, 1, 2}, 7, 0);
  torch::manual_seed(1);
  const torch::Tensor a = one.generate(items);
  torch::manual_seed(2);  // the global RNG does not reach the samples
  const torch::Tensor b = four.generate(items);
  EXPECT_TRUE(test::close(b, a, 1e-5, 1e-6));
  EXPECT_TRUE(torch::equal(four.generate(items), b));
  o.seed = 6;  // another seed: other D (and z)
  EXPECT_FALSE(torch::allclose(sample::Sampler(c, o, warn).generate(items), b));
}

TEST(Sampler, EmaByDefaultGWithNoEma) {
  const CheckpointData c = load_checkpoint(checkpoint());
  std::ostringstream warn;
  sample::SamplerOptions o;
  const sample::Sampler ema(c, o, warn);
  o.ema = false;
  const sample::Sampler g(c, o, warn);
  EXPECT_TRUE(ema.uses_ema());
  EXPECT_FALSE(g.uses_ema());
  const torch::Tensor z = torch::randn({3, 8}), y = torch::tensor({0, 1, 2}, torch::kLong);
  const torch::Tensor want_ema = load_generator(c, true)->forward(z, y), want_g = load_generator(c, false)->forward(z, y);
  EXPECT_FALSE(torch::allclose(want_ema, want_g)) << "test checkpoint's G and EMA G must differ";
  EXPECT_TRUE(test::close(ema.generate(z, y), want_ema, 1e-6, 1e-6));
  EXPECT_TRUE(test::close(g.generate(z, y), want_g, 1e-6, 1e-6));
  // A checkpoint without EMA says so and samples with G.
  const CheckpointData n = load_checkpoint(checkpoint(false));
  std::ostringstream w2;
  const sample::Sampler fallback(n, sample::SamplerOptions{}, w2);
  EXPECT_FALSE(fallback.uses_ema());
  EXPECT_NE(w2.str().find("no EMA generator"), std::string::npos) << w2.str();
}

TEST(SampleCommand, ImageFolderLayoutCountsAndNoOverwrite) {
  const std::string out = fresh("out");
  ASSERT_EQ(run_cli({"sample", "--checkpoint", checkpoint(), "--classes", "0,2", "--per-class", "3", "--batch", "2",
                     "--out", out, "--grid", out + "_grid.png", "--interpolate", out + "_interp.png", "--steps",
                     "5", "--threads", "1"}),
            0);
  const auto files = list_images(out);
  ASSERT_EQ(files.size(), 6u);
  EXPECT_EQ(files[0], out + "/000/000000.png");
  EXPECT_EQ(files[3], out + "/002/000000.png");
  EXPECT_EQ(files[5], out + "/002/000002.png");
  EXPECT_FALSE(fs::exists(out + "/001"));
  EXPECT_EQ(to_tensor(decode_image(files[0])).sizes(), (std::vector<int64_t>{1, 32, 32}));
  // The PNG holds exactly the sampler's 8-bit image of (class 2, k = 1).
  const CheckpointData c = load_checkpoint(checkpoint());
  std::ostringstream warn;
  const sample::Sampler s(c, sample::SamplerOptions{}, warn);
  const torch::Tensor want = sample::to_uint8(s.generate(std::vector<sample::SampleItem>{{2, 1}}))[0];
  const torch::Tensor got = to_tensor(decode_image(out + "/002/000001.png")).mul(255).round().to(torch::kUInt8);
  EXPECT_TRUE(torch::equal(got, want));
  // Grid: 2 rows (classes 0, 2) x 8 columns (default --cols), 32 px upscaled to 64 px cells with
  // 2 px borders, after the class-label column (plot/labeled_grid.h); RGB for the labels.
  const LabeledGridLayout l = labeled_grid_layout(32, 2);
  ASSERT_EQ(l.cell, 64);
  EXPECT_EQ(to_tensor(decode_image(out + "_grid.png")).sizes(), (std::vector<int64_t>{3, 2 * 66 + 2, l.margin + 8 * 66 + 2}));
  EXPECT_EQ(to_tensor(decode_image(out + "_interp.png")).sizes(), (std::vector<int64_t>{3, 2 * 66 + 2, l.margin + 5 * 66 + 2}));
  // A second run into the same directory must not lose the first one's outputs.
  const std::string e = test::error_of([&] { run_cli({"sample", "--checkpoint", checkpoint(), "-n", "3", "--out", out}); });
  EXPECT_NE(e.find("not empty"), std::string::npos) << e;
  EXPECT_NE(e.find("--overwrite"), std::string::npos) << e;
  ASSERT_EQ(run_cli({"sample", "--checkpoint", checkpoint(), "--count", "3", "--out", out, "--overwrite"}), 0);
  // --overwrite replaces the earlier sample ("wrote 3" must mean the folder holds those
  // 3, not 7 from two runs): 000..002/000000.png only.
  EXPECT_EQ(list_images(out).size(), 3u);
  const std::string bad = test::error_of([&] { run_cli({"sample", "--checkpoint", checkpoint(), "--classes", "3", "-n", "1", "--out", out + "x"}); });
  EXPECT_NE(bad.find("class 3 is out of range"), std::string::npos) << bad;
}

TEST(Interpolation, EndsAreTheTwoLatents) {
  const torch::Tensor z0 = torch::randn({8}), z1 = torch::randn({8});
  const torch::Tensor z = sample::interpolation_latents(z0, z1, 4);
  EXPECT_TRUE(test::close(z[0], z0, 0, 1e-7));
  EXPECT_TRUE(test::close(z[3], z1, 0, 1e-7));
  EXPECT_TRUE(test::close(z[1], z0 * (2.0 / 3) + z1 * (1.0 / 3), 1e-6, 1e-6));
  EXPECT_NE(test::error_of([&] { sample::interpolation_latents(z0, z1, 1); }).find("--steps 1"), std::string::npos);
}

// The eval section: typed keys, unknown keys rejected, and checkpoints whose stored config
// predates it (no eval section) still load, with the defaults.
TEST(EvalConfig, KeysDefaultsAndOldCheckpoints) {
  const Config c = parse_config("eval: {inception: /w/pt_inception.pth, fid_n: 500}", "eval test");
  EXPECT_EQ(c.eval.inception, "/w/pt_inception.pth");
  EXPECT_EQ(c.eval.fid_n, 500);
  const std::string e = test::error_of([] { parse_config("eval: {inceptoin: x}", "eval test"); });
  EXPECT_NE(e.find("'eval.inceptoin'"), std::string::npos) << e;
  const std::string p = fresh("old") + "/ckpt_000000005.pt";
  const std::string yaml = test::tiny_checkpoint_yaml();
  ASSERT_EQ(yaml.find("eval"), std::string::npos);
  test::write_tiny_checkpoint(p, 5, true, 1, yaml, /*raw_yaml=*/true);
  const CheckpointData old = load_checkpoint(p);
  EXPECT_EQ(old.config_yaml, yaml);
  EXPECT_EQ(old.config.eval.inception, "");
  EXPECT_EQ(old.config.eval.fid_n, 10000);
}

namespace {

// DIR/<entry>/<k>.png for each (entry, count): 16x16 gray noise, or a flat white image for
// entries under a hidden folder (so counting them would move any statistic).
void add_images(const std::string& dir, const std::vector<std::pair<std::string, int>>& entries, uint64_t seed) {
  torch::manual_seed(seed);
  for (const auto& [entry, n] : entries) {
    fs::create_directories(fs::path(dir) / entry);
    const bool hidden = entry.find("/.") != std::string::npos || entry[0] == '.';
    for (int k = 0; k < n; ++k)
      write_png((fs::path(dir) / entry / (std::to_string(k) + ".png")).string(),
                hidden ? torch::full({16, 16, 1}, 255, torch::kUInt8)
                       : torch::randint(0, 256, {16, 16, 1}, torch::kLong).to(torch::kUInt8));
  }
}

std::string line_of(const std::string& text, const std::string& start) {
  const size_t at = text.find(start);
  return at == std::string::npos ? "(no '" + start + "' line)" : text.substr(at, text.find('\n', at) - at);
}

}  // namespace

// One folder that was not a number (even a hidden .ipynb_checkpoints/) made every folder
// labelled by its sorted position (008/ became class 2) and its images were scored. Classes
// are the folders' numbers; hidden entries are skipped at any depth; a stray folder or loose
// images beside class folders are errors naming them.
TEST(FakeFolder, ClassesAreFolderNumbersAndHiddenEntriesAreSkipped) {
  const std::string dir = fresh("fake_labels");
  add_images(dir, {{"000", 2}, {"008", 1}, {".ipynb_checkpoints", 2}, {"008/.ipynb_checkpoints", 1}}, 1);
  std::ofstream(dir + "/.hidden.png") << "x";
  std::ofstream(dir + "/classes.txt") << "000 a\n008 b\n";  // not an image: no sample, no error
  const metrics::SampleFolder f = metrics::sample_folder(dir);
  EXPECT_EQ(f.files, (std::vector<std::string>{dir + "/000/0.png", dir + "/000/1.png", dir + "/008/0.png"}));
  ASSERT_TRUE(f.labels.defined());
  EXPECT_TRUE(torch::equal(f.labels, torch::tensor({0, 0, 8}, torch::kLong))) << f.labels;
  EXPECT_EQ(f.skipped, (std::vector<std::string>{".hidden.png (1 image)", ".ipynb_checkpoints/ (2 images)",
                                                  "008/.ipynb_checkpoints/ (1 image)"}));
  // A flat folder has no classes.
  const std::string flat = fresh("fake_flat");
  add_images(flat, {{"", 3}, {".ipynb_checkpoints", 1}}, 2);
  const metrics::SampleFolder ff = metrics::sample_folder(flat);
  EXPECT_EQ(ff.files.size(), 3u);
  EXPECT_FALSE(ff.labels.defined());
  // A folder that is not a class number, and loose images beside class folders: errors naming them.
  add_images(dir, {{"extra", 2}}, 3);
  std::string e = test::error_of([&] { metrics::sample_folder(dir); });
  EXPECT_NE(e.find(dir + ": extra/ (2 images): not a class number"), std::string::npos) << e;
  fs::remove_all(dir + "/extra");
  write_png(dir + "/grid.png", torch::zeros({4, 4, 3}, torch::kUInt8));
  e = test::error_of([&] { metrics::sample_folder(dir); });
  EXPECT_NE(e.find(dir + ": grid.png beside the class folders"), std::string::npos) << e;
}

// Through `hamgan fid --fake` with a 10-class classifier: class accuracy per class 0 and 8
// (never by position), and the FID with a hidden folder of white images beside the samples is
// the FID without it.
TEST(FakeFolder, FidFakeScoresTheSamplesOnly) {
  metrics::ClassifierOptions o;
  o.resolution = 16, o.channels = 1, o.n_classes = 10, o.width = 4, o.feature_dim = 8;
  torch::manual_seed(5);
  metrics::DomainClassifier net(o);
  metrics::ClassifierInfo info;
  info.options = o, info.data = "test", info.test_accuracy = 0.99, info.test_n = 1000;
  const std::string clf = fresh("fake_clf") + ".pt";
  metrics::save_classifier(clf, net, info);
  const std::string real = fresh("fake_real"), fake = fresh("fake_scored");
  add_images(real, {{"", 6}}, 4);
  add_images(fake, {{"000", 3}, {"008", 3}, {".ipynb_checkpoints", 2}}, 5);
  const auto fid = [&] {
    return test::run_cli(cli::fid, "fid", {"--real", real, "--fake", fake, "--features", clf, "--threads", "1"});
  };
  const std::string with_hidden = fid();
  const std::string acc = line_of(with_hidden, "class_acc ");
  EXPECT_NE(acc.find("(per class: 0 "), std::string::npos) << acc;
  EXPECT_NE(acc.find(", 8 "), std::string::npos) << acc;
  EXPECT_EQ(acc.find(", 1 "), std::string::npos) << acc;
  EXPECT_EQ(acc.find(", 2 "), std::string::npos) << acc;
  fs::remove_all(fake + "/.ipynb_checkpoints");
  const std::string without = fid();
  EXPECT_EQ(line_of(with_hidden, "FID "), line_of(without, "FID ")) << with_hidden << "\n" << without;
  EXPECT_EQ(acc, line_of(without, "class_acc "));
  // A stray folder is refused before any image is scored.
  add_images(fake, {{"backup", 1}}, 6);
  const std::string e = test::error_of([&] { fid(); });
  EXPECT_NE(e.find(fake + ": backup/: not a class number"), std::string::npos) << e;
}

}  // namespace test_sample
