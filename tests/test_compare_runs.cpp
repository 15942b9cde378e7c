// `hamgan compare`: scored runs side by side (the module comparison of docs/modules): the
// summary table (last, best, median img/s), the ranking, the figure, and the errors that keep
// incomparable runs apart. Also the line plot's legend column for many series.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gan/cli/commands.h"
#include "gan/eval/compare_runs.h"
#include "gan/eval/score_table.h"
#include "io/decode.h"
#include "io/image.h"
#include "plot/line_plot.h"
#include "support/cli.h"
#include "support/errors.h"

namespace test_compare_runs {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_compare_runs", name); }

// A run directory with scores.csv rows {iteration, fid, class_acc} scored in `net` (precision
// fid / 1000, recall 0.5, density 1, coverage 0.25, intra-class FID 2 fid), and a
// metrics.jsonl carrying the given img_s values.
std::string make_run(const std::string& dir, const std::vector<std::array<double, 3>>& rows, const std::string& net,
                     const std::vector<double>& img_s) {
  fs::create_directories(dir);
  for (const auto& r : rows) {
    eval::ScoreRow row;
    row.iteration = static_cast<int64_t>(r[0]), row.net = net, row.n = 1000, row.seconds = 1;
    row.values = {{"fid", r[1]}, {"precision", r[1] / 1000}, {"recall", 0.5}, {"density", 1}, {"coverage", 0.25},
                  {"ifid", 2 * r[1]}};
    if (!std::isnan(r[2])) row.values["class_acc"] = r[2];
    eval::append_run_score(dir, row);
  }
  std::ofstream log(dir + "/metrics.jsonl");
  for (size_t i = 0; i < img_s.size(); ++i)
    log << "{\"iteration\": " << 25 * (i + 1) << ", \"g_loss\": 0.5, \"img_s\": " << img_s[i] << "}\n";
  return dir;
}

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int64_t count_colour(const torch::Tensor& chw, int64_t y0, int64_t y1, std::array<uint8_t, 3> c) {
  const torch::Tensor u = (chw * 255).round().to(torch::kUInt8).slice(1, y0, y1);
  return (u[0].eq(c[0]) & u[1].eq(c[1]) & u[2].eq(c[2])).sum().item<int64_t>();
}

}  // namespace

// Run A: FID 100, 80, 90 (best 80 at 1000, last 90 at 1500); run B: FID 120, 70 (last = best).
// The CSV holds last and best rows and the median img/s; the ranking puts B (70) first; the
// figure has a panel per metric both runs have (fid, class_acc, precision, recall, density,
// coverage, ifid), each with both runs' colours.
TEST(CompareRuns, SummaryRankingAndFigure) {
  const std::string root = fresh("summary");
  const std::string a = make_run(root + "/ham_nmf", {{{500, 100, 0.5}}, {{1000, 80, 0.6}}, {{1500, 90, 0.7}}},
                                 "clf-1", {10, 30, 20});
  const std::string b = make_run(root + "/sao", {{{500, 120, 0.4}}, {{1000, 70, 0.8}}}, "clf-1", {40});
  const std::string out = test::run_cli(cli::compare, "compare", {"--run", a, "--run", b + "/", "--out", root + "/cmp"});
  EXPECT_EQ(read(root + "/cmp.csv"),
            "run,iteration,best_iteration,img_s,features,fid,is,kid,class_acc,precision,recall,density,coverage,ifid,"
            "best_fid,best_is,best_kid,best_class_acc,best_precision,best_recall,best_density,best_coverage,best_ifid\n"
            "ham_nmf,1500,1000,20.0,clf-1,90.0000,,,0.7000,0.0900,0.5000,1.0000,0.2500,180.0000,"
            "80.0000,,,0.6000,0.0800,0.5000,1.0000,0.2500,160.0000\n"
            "sao,1000,1000,40.0,clf-1,70.0000,,,0.8000,0.0700,0.5000,1.0000,0.2500,140.0000,"
            "70.0000,,,0.8000,0.0700,0.5000,1.0000,0.2500,140.0000\n");
  EXPECT_NE(out.find("| rank | run | iteration | fid | class_acc | precision | recall | density | coverage | ifid | best fid "
                     "(iteration) | img/s |"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("| 1 | sao | 1000 | 70.0 | 0.8 | 0.07 | 0.5 | 1 | 0.25 | 140 | 70.0 (1000) | 40.0 |"), std::string::npos)
      << out;
  EXPECT_NE(out.find("| 2 | ham_nmf | 1500 | 90.0 | 0.7 | 0.09 | 0.5 | 1 | 0.25 | 180 | 80.0 (1000) | 20.0 |"),
            std::string::npos)
      << out;
  const torch::Tensor img = to_tensor(decode_image(root + "/cmp.png"));
  ASSERT_EQ(img.sizes(), (std::vector<int64_t>{3, 7 * 440, 800}));
  for (int64_t panel = 0; panel < 7; ++panel)
    for (size_t k : {0, 1})
      EXPECT_GT(count_colour(img, panel * 440, panel * 440 + 440, plot::plot_palette()[k]), 50)
          << "panel " << panel << " series " << k;
}

// Runs whose real_scores.csv rows agree (one data source, network and count) get the real test
// images' line in every panel of a metric it has, in the colour after theirs; one run without
// the file, or another row, and the line is not drawn: it would belong to only some runs.
TEST(CompareRuns, TheRealImagesLineWhereEveryRunHasTheSame) {
  const std::string root = fresh("real_line");
  const std::string a = make_run(root + "/a", {{{500, 100, 0.5}}, {{1000, 80, 0.6}}}, "clf-1", {10});
  const std::string b = make_run(root + "/b", {{{500, 120, 0.4}}, {{1000, 70, 0.8}}}, "clf-1", {10});
  eval::ScoreRow real;
  real.iteration = 0, real.n = 1000, real.seconds = 1, real.net = "clf-1";
  real.values = {{"fid", 2}, {"class_acc", 0.9}, {"precision", 0.88}, {"recall", 0.88}, {"density", 1}, {"coverage", 0.97}};
  eval::write_score_table(eval::real_scores_csv(a), {real});
  const auto orange_per_panel = [&](const std::string& out) {
    test::run_cli(cli::compare, "compare", {"--run", a, "--run", b, "--out", out});
    const torch::Tensor img = to_tensor(decode_image(out + ".png"));
    std::vector<int64_t> n;
    for (int64_t p = 0; p < img.size(1) / 440; ++p)
      n.push_back(count_colour(img, p * 440, p * 440 + 440, plot::plot_palette()[2]));
    return n;
  };
  for (const int64_t n : orange_per_panel(root + "/only_a")) EXPECT_EQ(n, 0) << "a line only run a has";
  real.values["recall"] = 0.87;
  eval::write_score_table(eval::real_scores_csv(b), {real});
  for (const int64_t n : orange_per_panel(root + "/differ")) EXPECT_EQ(n, 0) << "two different real rows";
  real.values["recall"] = 0.88;
  eval::write_score_table(eval::real_scores_csv(b), {real});
  const std::vector<int64_t> both = orange_per_panel(root + "/both");
  ASSERT_EQ(both.size(), 7u);  // fid, class_acc, precision, recall, density, coverage, ifid
  for (size_t p = 0; p < 6; ++p) EXPECT_GT(both[p], 50) << "panel " << p;
  EXPECT_EQ(both[6], 0) << "ifid: the real row has none";
}

// Runs without class accuracy (Inception) get no class_acc panel; img/s is empty without a log.
TEST(CompareRuns, InceptionRunsWithoutLog) {
  const std::string root = fresh("inception");
  const std::string a = make_run(root + "/a", {{{100, 50, std::nan("")}}}, "", {});
  fs::remove(a + "/metrics.jsonl");
  const std::string b = make_run(root + "/b", {{{100, 40, std::nan("")}}, {{200, 30, std::nan("")}}}, "", {5});
  test::run_cli(cli::compare, "compare", {"--run", a, "--run", b, "--out", root + "/cmp"});
  EXPECT_EQ(read(root + "/cmp.csv"),
            "run,iteration,best_iteration,img_s,features,fid,is,kid,class_acc,precision,recall,density,coverage,ifid,"
            "best_fid,best_is,best_kid,best_class_acc,best_precision,best_recall,best_density,best_coverage,best_ifid\n"
            "a,100,100,,inception,50.0000,,,,0.0500,0.5000,1.0000,0.2500,100.0000,"
            "50.0000,,,,0.0500,0.5000,1.0000,0.2500,100.0000\n"
            "b,200,200,5.0,inception,30.0000,,,,0.0300,0.5000,1.0000,0.2500,60.0000,"
            "30.0000,,,,0.0300,0.5000,1.0000,0.2500,60.0000\n");
  // fid, precision, recall, density, coverage, ifid
  EXPECT_EQ(to_tensor(decode_image(root + "/cmp.png")).sizes(), (std::vector<int64_t>{3, 6 * 440, 800}));
}

// Errors name the run and what was expected; nothing is written when the input is bad.
TEST(CompareRuns, ErrorsNameTheRun) {
  const std::string root = fresh("errors");
  const std::string a = make_run(root + "/a", {{{100, 50, 0.5}}}, "clf-1", {1});
  const std::string c = make_run(root + "/c", {{{100, 50, 0.5}}}, "clf-2", {1});
  fs::create_directories(root + "/empty");
  std::string e = test::error_of([&] { eval::summarize_runs({a, root + "/empty"}); });
  EXPECT_NE(e.find(root + "/empty"), std::string::npos) << e;
  EXPECT_NE(e.find("no scores.csv"), std::string::npos) << e;
  EXPECT_NE(e.find("hamgan fid --run"), std::string::npos) << e;
  e = test::error_of([&] { eval::summarize_runs({a, c}); });
  EXPECT_NE(e.find("clf-2"), std::string::npos) << e;
  EXPECT_NE(e.find("do not compare"), std::string::npos) << e;
  e = test::error_of([&] { eval::summarize_runs({a, root + "/x/../a"}); });
  EXPECT_NE(e.find("share the name 'a'"), std::string::npos) << e;
  e = test::error_of([&] { eval::summarize_runs(std::vector<std::string>(11, a)); });
  EXPECT_NE(e.find("11 runs; at most 10"), std::string::npos) << e;
  e = test::error_of([&] { test::run_cli(cli::compare, "compare", {"--run", a, "--run", c, "--out", root + "/cmp"}); });
  EXPECT_NE(e.find("do not compare"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(root + "/cmp.png"));
  EXPECT_FALSE(fs::exists(root + "/cmp.csv"));
  e = test::error_of([&] { test::run_cli(cli::compare, "compare", {"--run", a}); });
  EXPECT_NE(e.find("--out"), std::string::npos) << e;
}

// Eight series with long names do not fit one legend row over the plot: the legend becomes a
// column right of the plotting area, each name in its colour; lines keep their colours.
// FID's bias depends on the sample count: runs scored with 1000 and with 50 samples are not
// ranked together; the error names both counts and the run.
TEST(CompareRuns, RunsScoredWithOtherSampleCountsAreRefused) {
  const std::string root = fresh("counts");
  const std::string a = make_run(root + "/a", {{{100, 50, 0.5}}}, "clf-1", {1});
  fs::create_directories(root + "/b");
  eval::append_run_score(root + "/b", {100, 50, 1, "clf-1", {{"fid", 40}}});
  const std::string e = test::error_of([&] { eval::summarize_runs({a, root + "/b"}); });
  EXPECT_NE(e.find(root + "/b was scored with 50 samples, " + a + " with 1000"), std::string::npos) << e;
  EXPECT_NE(e.find("do not compare"), std::string::npos) << e;
}

TEST(CompareLinePlot, LegendColumnForManySeries) {
  const std::vector<double> xs = {0, 1, 2};
  std::vector<plot::Series> series;
  for (int k = 0; k < 8; ++k)
    series.push_back({"SELF_ATTENTION_" + std::to_string(k), {double(k), double(k) + 1, std::nan("")}});
  plot::PlotFrame f;
  const torch::Tensor img = plot::line_plot(xs, series, plot::PlotStyle{}, &f);
  EXPECT_LT(f.right, 640 - 20 - 100);  // room taken for the column
  for (int k = 0; k < 8; ++k) {
    const auto c = plot::plot_palette()[k];
    int64_t in_column = 0;
    for (int64_t y = 0; y < img.size(0); ++y)
      for (int64_t x = f.right + 1; x < img.size(1); ++x)
        in_column += img[y][x][0].item<uint8_t>() == c[0] && img[y][x][1].item<uint8_t>() == c[1] &&
                     img[y][x][2].item<uint8_t>() == c[2];
    EXPECT_GT(in_column, 20) << "legend entry " << k;
    const auto at = img[f.py(k)][f.px(0)];
    EXPECT_EQ((std::array<uint8_t, 3>{at[0].item<uint8_t>(), at[1].item<uint8_t>(), at[2].item<uint8_t>()}), c);
  }
  const std::string e = test::error_of([&] {
    plot::PlotStyle narrow;
    narrow.width = 200;
    plot::line_plot(xs, series, narrow);
  });
  EXPECT_NE(e.find("too narrow for the legend of 8 series"), std::string::npos) << e;
}

}  // namespace test_compare_runs
