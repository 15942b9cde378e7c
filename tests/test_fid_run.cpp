// FID over a run's checkpoints: scores.csv reading/appending (skip scored rows, clear errors), the
// scores.png line plot, and `hamgan fid --run` scoring only new checkpoints. Inception weights: random,
// written by tests/oracle/fid_run.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "gan/cli/commands.h"
#include "gan/eval/score_table.h"
#include "gan/eval/score_run.h"
#include "io/decode.h"
#include "io/dir_lock.h"
#include "io/image.h"
#include "io/output_path.h"
#include "io/png.h"
#include "plot/bitmap_font.h"
#include "metrics/image_dir.h"
#include "metrics/statistics.h"
#include "plot/line_plot.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/oracle.h"
#include "support/process.h"
#include "support/tiny_checkpoint.h"

namespace test_fid_run {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_fid_run", name); }

std::string weights() { return test::oracle_path("inception_random.pth"); }

std::string fid_cli(const std::vector<std::string>& args) { return test::run_cli(cli::fid, "fid", args); }

// Two fixed noise images (32x32 RGB) as an ImageFolder directory with one class.
std::string noise_dir(const std::string& name, uint64_t seed) {
  const std::string dir = fresh(name);
  fs::create_directories(dir + "/0");
  torch::manual_seed(seed);
  for (int i = 0; i < 2; ++i)
    write_png(dir + "/0/" + std::to_string(i) + ".png", torch::randint(0, 256, {32, 32, 3}).to(torch::kUInt8));
  return dir;
}

std::string real_dir() {
  static const std::string d = noise_dir("real", 3);
  return d;
}

double printed_fid(const std::string& out) {
  const auto at = ("\n" + out).find("\nfid ");
  EXPECT_NE(at, std::string::npos) << out;
  return at == std::string::npos ? NAN : std::stod(out.substr(at + 4));
}

// Sets (or, with nullptr, unsets) an environment variable for one scope, then restores it.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> before;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* b = std::getenv(name.c_str())) before = b;
    if (value) setenv(name.c_str(), value, 1);
    else unsetenv(name.c_str());
  }
  ~ScopedEnv() {
    if (before) setenv(name.c_str(), before->c_str(), 1);
    else unsetenv(name.c_str());
  }
};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST(ScoreTable, AppendReadSkipAndErrors) {
  const std::string dir = fresh("csv");
  fs::create_directories(dir);
  const std::string p = eval::scores_csv(dir);
  EXPECT_TRUE(eval::read_run_scores(dir).empty());
  eval::append_run_score(dir, {100, 10, 1.5, "", {{"fid", 12.5}, {"is", 2.25}}});
  eval::append_run_score(dir, {200, 10, 1.75, "", {{"fid", 10.25}, {"is", 2.5}, {"kid", 0.125}}});
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "iteration,n,seconds,features,fid,is,kid,class_acc,precision,recall,density,coverage,ifid\n"
                      "100,10,1.5,inception,12.5,2.25,,,,,,,\n200,10,1.75,inception,10.25,2.5,0.125,,,,,,\n");
  const auto rows = eval::read_run_scores(dir);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].iteration, 200);
  EXPECT_DOUBLE_EQ(rows[1].value("fid"), 10.25);
  EXPECT_TRUE(std::isnan(rows[0].value("kid")));
  EXPECT_EQ(eval::scored_iterations(rows), (std::set<int64_t>{100, 200}));
  std::ofstream(p, std::ios::app) << "300,10,1,inception,abc,1,1,,,,,,\n";
  const std::string e = test::error_of([&] { eval::read_score_table(p); });
  EXPECT_NE(e.find(p + ":4"), std::string::npos) << e;
  EXPECT_NE(e.find("'fid'"), std::string::npos) << e;
  std::ofstream(dir + "/short.csv") << "iteration,fid,is,kid,n,seconds\n1,2,3\n";
  const std::string e2 = test::error_of([&] { eval::read_score_table(dir + "/short.csv"); });
  EXPECT_NE(e2.find("short.csv:2"), std::string::npos) << e2;
  EXPECT_NE(e2.find("expected 6"), std::string::npos) << e2;
  std::ofstream(dir + "/head.csv") << "it,fid\n";
  EXPECT_NE(test::error_of([&] { eval::read_score_table(dir + "/head.csv"); }).find("head.csv:1: header"),
            std::string::npos);
}

// A scores.csv saved by a spreadsheet or editor that puts a UTF-8 byte-order mark before the
// header (and CR LF line ends) gave "column 'iteration' is unknown". Every table reader skips
// the mark, and so does the check that recognises an earlier table by its first line.
TEST(ScoreTable, AByteOrderMarkBeforeTheHeaderIsSkipped) {
  const std::string dir = fresh("bom");
  fs::create_directories(dir);
  const std::string header = eval::score_table_header();
  std::ofstream(eval::scores_csv(dir), std::ios::binary)
      << "\xEF\xBB\xBF" << header << "\r\n100,10,1.5,inception,12.5,2.25,,,,,,,\r\n";
  auto rows = eval::read_run_scores(dir);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].iteration, 100);
  EXPECT_DOUBLE_EQ(rows[0].value("fid"), 12.5);
  eval::append_run_score(dir, {200, 10, 1.75, "", {{"fid", 10.25}}});
  rows = eval::read_run_scores(dir);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[1].value("fid"), 10.25);
  EXPECT_EQ(test::error_of([&] { io::check_output_path(eval::scores_csv(dir), io::text_output("a score table", {header})); }),
            "(no error)");
}

TEST(ScoresLinePlot, PngOfExpectedSizeWithPointsWhereExpected) {
  const std::string p = fresh("plot") + ".png";
  const std::vector<double> xs = {1000, 2000, 3000, 5000}, ys = {80.5, 60.25, 55, 41};
  plot::write_line_plot(p, xs, ys);
  ASSERT_FALSE(fs::exists(p + ".tmp"));
  const torch::Tensor img = to_tensor(decode_image(p)).mul(255).round().to(torch::kUInt8);  // [3, H, W]
  ASSERT_EQ(img.sizes(), (std::vector<int64_t>{3, 400, 640}));
  plot::PlotFrame f;
  const torch::Tensor mem = plot::line_plot(xs, ys, plot::PlotStyle{}, &f);
  EXPECT_TRUE(torch::equal(mem.permute({2, 0, 1}), img));
  auto rgb = [&](int64_t x, int64_t y) {
    return std::array<int, 3>{img[0][y][x].item<int>(), img[1][y][x].item<int>(), img[2][y][x].item<int>()};
  };
  const std::array<int, 3> line = {plot::kPlotLine[0], plot::kPlotLine[1], plot::kPlotLine[2]};
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t x = f.px(xs[i]), y = f.py(ys[i]);
    EXPECT_GT(x, f.left);
    EXPECT_LT(x, f.right);
    EXPECT_GT(y, f.top);
    EXPECT_LT(y, f.bottom);
    EXPECT_EQ(rgb(x, y), line) << "point " << i;
    EXPECT_EQ(rgb(x + 2, y - 2), line) << "point " << i << " is a 5x5 square";
  }
  // Halfway along the first segment lies on the line (Bresenham passes within a pixel).
  const int64_t mx = (f.px(xs[0]) + f.px(xs[1])) / 2;
  bool on_line = false;
  for (int64_t y = f.top; y <= f.bottom; ++y) on_line = on_line || rgb(mx, y) == line;
  EXPECT_TRUE(on_line);
  EXPECT_EQ(rgb(f.left, (f.top + f.bottom) / 2), (std::array<int, 3>{0, 0, 0})) << "y axis";
  EXPECT_EQ(rgb(f.right - 1, f.top + 1), (std::array<int, 3>{255, 255, 255})) << "background";
  // Tick labels: some black text pixels left of the y axis and below the x axis.
  EXPECT_GT(img.slice(1, f.top, f.bottom).slice(2, 0, f.left - 6).eq(0).sum().item<int64_t>(), 50);
  EXPECT_GT(img.slice(1, f.bottom + 6, 400).eq(0).sum().item<int64_t>(), 50);
  const auto ticks = plot::nice_ticks(1000, 5000);
  EXPECT_EQ(ticks, (std::vector<double>{1000, 2000, 3000, 4000, 5000}));
}

// fid --run: two checkpoints -> two rows; again -> none; a third -> one more; scores.png redrawn.
TEST(FidRun, ScoresOnlyNewCheckpoints) {
  const std::string run = fresh("run");
  const std::string yaml = test::tiny_checkpoint_yaml();
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 10), 10, true, 1, yaml);
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 20), 20, true, 2, yaml);
  const std::vector<std::string> args = {"--real", real_dir(), "--run", run, "--count", "2", "--inception", weights(),
                                         "--threads", "2"};
  EXPECT_NE(fid_cli(args).find("scored 2 checkpoints"), std::string::npos);
  auto rows = eval::read_run_scores(run);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].iteration, 10);
  EXPECT_EQ(rows[1].iteration, 20);
  for (const auto& r : rows) {
    EXPECT_TRUE(std::isfinite(r.value("fid")) && r.value("fid") > 0);
    EXPECT_TRUE(std::isfinite(r.value("is")) && r.value("is") >= 1 - 1e-9);  // exp(KL) >= 1
    EXPECT_TRUE(std::isfinite(r.value("kid"))) << "--real is a directory: KID is computed";
    EXPECT_EQ(r.n, 2);
  }
  // One 400-pixel panel per metric with a value: fid, is, kid.
  EXPECT_EQ(to_tensor(decode_image(eval::scores_png(run))).sizes(), (std::vector<int64_t>{3, 3 * 400, 640}));
  EXPECT_NE(fid_cli(args).find("scored 0 checkpoints"), std::string::npos);
  EXPECT_EQ(eval::read_run_scores(run).size(), 2u);
  {  // With every row there, a scorer still adds the rows TensorBoard's view lacks: one at a time.
    const io::DirLock other(run, ".fid.lock");
    EXPECT_NE(test::fid_error(args).find("in use by another hamgan process"), std::string::npos);
  }
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 30), 30, true, 3, yaml);
  EXPECT_NE(fid_cli(args).find("scored 1 checkpoints"), std::string::npos);
  rows = eval::read_run_scores(run);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].iteration, 30);
}

// A reference whose mean is finite but huge (1e200) makes the FID overflow to inf. The score is
// refused before its row is written: the table stays one hamgan's reader accepts, and the next
// `fid --run` (here against a sane reference) scores the run.
TEST(FidRun, AnInfiniteScoreIsRefusedBeforeItsRow) {
  const std::string run = fresh("run_inf");
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 10), 10, true, 1, test::tiny_checkpoint_yaml());
  metrics::GaussianStats huge;
  huge.mu = torch::full({2048}, 1e200, torch::kDouble);
  huge.sigma = torch::eye(2048, torch::kDouble);
  huge.n = 2;
  const std::string npz = run + "_huge.npz";
  metrics::save_stats(npz, huge);
  const std::string e =
      test::fid_error({"--real", npz, "--run", run, "-n", "2", "--inception", weights(), "--threads", "2"});
  EXPECT_NE(e.find("iteration 10: fid is inf"), std::string::npos) << e;
  EXPECT_NE(e.find("not written"), std::string::npos) << e;
  EXPECT_TRUE(eval::read_run_scores(run).empty());
  EXPECT_NE(fid_cli({"--real", real_dir(), "--run", run, "-n", "2", "--inception", weights(), "--threads", "2"})
                .find("scored 1 checkpoints"),
            std::string::npos);
  EXPECT_EQ(eval::read_run_scores(run).size(), 1u);
}

// -n 2 against 2 real images: KID's every subset of 1000 is the whole set, and its "+- 6e-14"
// was rounding noise printed as a spread. The value is printed alone, and why once per run.
TEST(FidRun, KidOfNoMoreSamplesThanItsSubsetSizeHasNoSpread) {
  const std::string run = fresh("run_kid_spread");
  const std::string yaml = test::tiny_checkpoint_yaml();
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 10), 10, true, 1, yaml);
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 20), 20, true, 2, yaml);
  testing::internal::CaptureStderr();
  fid_cli({"--real", real_dir(), "--run", run, "-n", "2", "--inception", weights(), "--threads", "2"});
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("iteration 20: "), std::string::npos) << log;
  EXPECT_FALSE(std::regex_search(log, std::regex(R"(kid [-0-9.e]+ \+-)"))) << log;  // "kid 0.78 +- 6e-14"
  EXPECT_FALSE(std::regex_search(log, std::regex(R"(is [-0-9.e]+ \+-)"))) << log;   // "is 1 +- 0": 1 sample a split
  const std::string why = "note: kid has no +- spread: 2 real and 2 fake samples are at most its subset size 1000, "
                          "so every subset is the whole set\n";
  EXPECT_NE(log.find(why), std::string::npos) << log;
  EXPECT_EQ(log.find(why), log.rfind(why)) << "said once, not per checkpoint: " << log;
  for (const auto& r : eval::read_run_scores(run)) EXPECT_TRUE(std::isfinite(r.value("kid")));
}

// scores.png is redrawn after each row: a scores.png that is not a PNG is refused before any score,
// so "nothing was written" is true (no row is appended to scores.csv).
TEST(FidRun, AScoresPngItMayNotReplaceIsRefusedBeforeAnyRow) {
  const std::string run = fresh("run_png_taken");
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 10), 10, true, 1, test::tiny_checkpoint_yaml());
  std::ofstream(eval::scores_png(run)) << "my notes\n";
  const std::string e = test::error_of(
      [&] { fid_cli({"--real", real_dir(), "--run", run, "-n", "2", "--inception", weights(), "--threads", "2"}); });
  EXPECT_NE(e.find(eval::scores_png(run) + " exists and is not a PNG image"), std::string::npos) << e;
  EXPECT_NE(e.find("nothing was written"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(eval::scores_csv(run))) << "the message says nothing was written";
  EXPECT_EQ(test::read_text(eval::scores_png(run)), "my notes\n");
}

// A damaged checkpoint in the middle (and as the newest) is skipped with a
// warning naming it; the others are scored, and the command fails at the end, listing it.
TEST(FidRun, DamagedCheckpointIsSkippedTheRestScoredThenAnError) {
  const std::string run = fresh("run_damaged");
  const std::string yaml = test::tiny_checkpoint_yaml(), ck = run + "/checkpoints";
  test::write_tiny_checkpoint(checkpoint_path(ck, 10), 10, true, 1, yaml);
  test::write_tiny_checkpoint(checkpoint_path(ck, 20), 20, true, 2, yaml);
  test::write_tiny_checkpoint(checkpoint_path(ck, 30), 30, true, 3, yaml);
  test::write_tiny_checkpoint(checkpoint_path(ck, 40), 40, true, 4, yaml);
  for (int64_t it : {20, 40}) fs::resize_file(checkpoint_path(ck, it), fs::file_size(checkpoint_path(ck, it)) - 100);
  const std::vector<std::string> args = {"--real", real_dir(), "--run", run, "-n", "2", "--inception", weights(),
                                         "--threads", "2"};
  testing::internal::CaptureStderr();
  const std::string e = test::error_of([&] { fid_cli(args); });
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(e.find("2 damaged checkpoint(s)"), std::string::npos) << e;
  for (int64_t it : {20, 40}) {
    EXPECT_NE(e.find(checkpoint_path(ck, it)), std::string::npos) << e;
    EXPECT_NE(log.find("warning: skipping " + checkpoint_path(ck, it)), std::string::npos) << log;
  }
  const auto rows = eval::read_run_scores(run);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].iteration, 10);
  EXPECT_EQ(rows[1].iteration, 30);
}

// --inception > $HAMGAN_INCEPTION > eval.inception of -c: each level wins over the ones below
// it (a missing file at the winning level is the error, naming that file), and none at all
// is an error that says how to provide the weights.
TEST(FidCli, InceptionWeightsPrecedence) {
  const std::string dir = fresh("precedence");
  fs::create_directories(dir);
  const std::string cfg = dir + "/eval.yaml", out = dir + "/stats.npz";
  std::ofstream(cfg) << "eval:\n  inception: " << weights() << "\n";
  const std::vector<std::string> base = {"stats", "--images", real_dir(), "--out", out, "--threads", "2"};
  const auto with = [&](const std::vector<std::string>& extra) { return concat(base, extra); };
  {
    ScopedEnv env("HAMGAN_INCEPTION", (dir + "/from_env.pth").c_str());
    const std::string e = test::error_of([&] { fid_cli(with({"--inception", dir + "/from_flag.pth", "-c", cfg})); });
    EXPECT_NE(e.find("from_flag.pth"), std::string::npos) << e;
    const std::string e2 = test::error_of([&] { fid_cli(with({"-c", cfg})); });
    EXPECT_NE(e2.find("from_env.pth"), std::string::npos) << e2;
  }
  ScopedEnv unset("HAMGAN_INCEPTION", nullptr);
  const std::string e3 = test::error_of([&] { fid_cli(base); });
  EXPECT_NE(e3.find("--inception PATH is required"), std::string::npos) << e3;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_NE(fid_cli(with({"-c", cfg})).find("wrote " + out), std::string::npos);
  EXPECT_EQ(metrics::load_stats(out).mu.numel(), 2048);
}

// A directory read as a data source (`--data`/`--format folder`: the training loader's decoding,
// [-1, 1] pixels) gives the statistics and FID of the same directory read as images.
TEST(FidCli, DataSourceEqualsImageDirectory) {
  const std::string dir = fresh("data_source");
  fs::create_directories(dir);
  const std::string fake = noise_dir("data_source_fake", 5);
  const std::vector<std::string> common = {"--inception", weights(), "--threads", "2"};
  const auto args = [&](const std::vector<std::string>& a) { return concat(a, common); };
  fid_cli(args({"stats", "--images", real_dir(), "--out", dir + "/images.npz"}));
  fid_cli(args({"stats", "--data", real_dir(), "--format", "folder", "--resolution", "32", "--out", dir + "/data.npz"}));
  const auto a = metrics::load_stats(dir + "/images.npz"), b = metrics::load_stats(dir + "/data.npz");
  EXPECT_GT(a.sigma.abs().max().item<double>(), 0);  // two different images: a real spread
  // The two paths differ only in rounding of the pixel scaling (x / 255 against (x / 127.5 - 1 + 1) / 2).
  EXPECT_TRUE(test::close(b.mu, a.mu, 1e-5, 1e-6 * a.mu.abs().max().item<double>()));
  EXPECT_TRUE(test::close(b.sigma, a.sigma, 1e-4, 1e-5 * a.sigma.abs().max().item<double>()));
  const double from_images = printed_fid(fid_cli(args({"--real", real_dir(), "--fake", fake})));
  const double from_data = printed_fid(fid_cli(args({"--real", real_dir(), "--format", "folder", "--fake", fake})));
  EXPECT_GT(from_images, 1e-3);  // different noise: a real distance, not a trivial 0
  EXPECT_NEAR(from_data, from_images, 1e-4 * from_images);
}

}  // namespace test_fid_run
