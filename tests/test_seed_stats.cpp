// Statistics over seeds (gan/eval/seed_stats.h) against scipy.stats.ttest_ind(equal_var=False),
// numpy's mean / std(ddof=1) and scipy's Student t survival function (tests/oracle/seed_stats.py),
// and `hamgan compare --seeds` (gan/eval/seed_table.h, seed_bands.h) on the oracle's made-up
// seeded runs: the printed table equals the one the oracle computed, the files it writes, and
// its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gan/cli/commands.h"
#include "gan/eval/seed_bands.h"
#include "gan/eval/seed_stats.h"
#include "gan/eval/seed_table.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/oracle.h"

namespace test_seed_stats {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::vector<double> values(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kDouble).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

// Tolerances: the statistics are a few float64 operations (rtol 1e-12); p goes through the
// incomplete beta function's continued fraction, converged to 1e-15 relative (rtol 1e-9).
TEST(SeedStats, WelchTMatchesScipy) {
  const TensorMap m = test::load_tensors(test::oracle_path("welch.pt"));
  int cases = 0;
  for (int k = 0; m.count("case" + std::to_string(k) + ".a"); ++k, ++cases) {
    const std::string c = "case" + std::to_string(k);
    const std::vector<double> a = values(test::get(m, c + ".a")), b = values(test::get(m, c + ".b"));
    const std::vector<double> e = values(test::get(m, c + ".expected"));
    const eval::MeanSd ma = eval::mean_sd(a), mb = eval::mean_sd(b);
    EXPECT_NEAR(ma.mean, e[0], 1e-12 * std::fabs(e[0])) << c;
    EXPECT_NEAR(ma.sd, e[1], 1e-12 * e[1]) << c;
    EXPECT_NEAR(mb.mean, e[2], 1e-12 * std::fabs(e[2])) << c;
    EXPECT_NEAR(mb.sd, e[3], 1e-12 * e[3]) << c;
    EXPECT_EQ(ma.n, static_cast<int64_t>(a.size()));
    const eval::WelchT w = eval::welch_t(a, b);
    EXPECT_NEAR(w.t, e[4], 1e-12 * std::fabs(e[4])) << c;
    EXPECT_NEAR(w.df, e[5], 1e-12 * e[5]) << c;
    EXPECT_NEAR(w.p, e[6], 1e-9 * e[6]) << c;
    // Swapping the sides negates t; df and p stay.
    const eval::WelchT s = eval::welch_t(b, a);
    EXPECT_NEAR(s.t, -w.t, 1e-12 * std::fabs(w.t)) << c;
    EXPECT_NEAR(s.p, w.p, 1e-12) << c;
  }
  EXPECT_EQ(cases, 7);
}

TEST(SeedStats, StudentTwoSidedPMatchesScipy) {
  const TensorMap m = test::load_tensors(test::oracle_path("welch.pt"));
  const torch::Tensor grid = test::get(m, "p.t_df").to(torch::kDouble);
  const std::vector<double> want = values(test::get(m, "p.expected"));
  ASSERT_EQ(grid.size(0), static_cast<int64_t>(want.size()));
  for (int64_t i = 0; i < grid.size(0); ++i) {
    const double t = grid[i][0].item<double>(), df = grid[i][1].item<double>();
    // Relative to p where it is not tiny; p of t = -40 at df 1000 is ~1e-200 and only its
    // magnitude matters.
    EXPECT_NEAR(eval::student_t_p(t, df), want[i], 1e-9 * want[i] + 1e-300) << "t " << t << ", df " << df;
  }
}

TEST(SeedStats, TooFewValuesGiveNanNotNumbers) {
  EXPECT_TRUE(std::isnan(eval::mean_sd({}).mean));
  const eval::MeanSd one = eval::mean_sd({3.0, NAN});  // NaN left out: one value, no sd
  EXPECT_EQ(one.n, 1);
  EXPECT_EQ(one.mean, 3.0);
  EXPECT_TRUE(std::isnan(one.sd));
  EXPECT_TRUE(std::isnan(eval::welch_t({1.0, 2.0}, {3.0}).t));
  EXPECT_TRUE(std::isnan(eval::welch_t({1.0, 1.0}, {2.0, 2.0}).t));  // both sds 0
  EXPECT_TRUE(std::isnan(eval::student_t_p(1.0, 0.0)));
}

TEST(CompareSeeds, TableEqualsTheOraclesAndFilesAreWritten) {
  const std::string runs = test::oracle_path("runs");
  const std::string want = read(test::oracle_path("table.md"));
  ASSERT_FALSE(want.empty());
  const auto groups = eval::load_seed_groups(runs);
  ASSERT_EQ(groups.size(), 4u);  // "unseeded" has no _s<seed>: in no group
  EXPECT_EQ(eval::seed_table(groups), want);

  const std::string dir = test::fresh_dir("test_seed_stats", "out");
  fs::create_directories(dir);
  const std::string printed = test::run_cli(cli::compare, "compare", {"--seeds", runs, "--out", dir + "/ranking"});
  EXPECT_EQ(printed.substr(0, want.size()), want);
  EXPECT_EQ(read(dir + "/ranking.md"), want);
  const std::string svg = read(dir + "/ranking.svg");
  // Two panels; per panel a line per group, a band per group with two seeds or more (3 of 4).
  EXPECT_EQ(count(svg, "<svg "), 1u);
  EXPECT_EQ(count(svg, "</svg>"), 1u);
  EXPECT_EQ(count(svg, "<polyline "), 8u);
  EXPECT_EQ(count(svg, "<polygon "), 6u);
  EXPECT_NE(svg.find("alpha (n = 3)"), std::string::npos);
  EXPECT_NE(svg.find("gamma (n = 1)"), std::string::npos);
  // Again: its own earlier outputs are replaced.
  test::run_cli(cli::compare, "compare", {"--seeds", runs, "--out", dir + "/ranking", "--from", "1500"});
  const std::string zoomed = read(dir + "/ranking.svg");
  EXPECT_NE(zoomed, svg);
  // --from: every curve starts at 1500 or later (gamma's 4 rows from 500: 2 points left).
  const auto curves = eval::seed_curves(groups, "fid", 1500);
  for (const auto& c : curves)
    for (const auto& p : c) EXPECT_GE(p.iteration, 1500);
  EXPECT_EQ(curves[3].size(), 2u);  // groups by name: alpha, beta, delta, gamma
}

// Runs' scores.csv (gan/eval/score_table.h), written by hamgan or by hand with a subset of the
// columns, join their groups; a pre-release build's fid.csv is refused, naming it.
TEST(CompareSeeds, ReadsScoresCsvAndRefusesAPreReleaseFidCsv) {
  const std::string dir = test::fresh_dir("test_seed_stats", "tables");
  auto row = [](int64_t it, double fid, double acc) {
    eval::ScoreRow r;
    r.iteration = it, r.n = 100, r.seconds = 1;
    r.values = {{"fid", fid}, {"class_acc", acc}};
    return r;
  };
  fs::create_directories(dir + "/new_s0");
  eval::append_run_score(dir + "/new_s0", row(100, 40.0, 0.5));
  eval::append_run_score(dir + "/new_s0", row(200, 30.0, 0.75));
  fs::create_directories(dir + "/new_s1");
  std::ofstream(dir + "/new_s1/scores.csv") << "iteration,fid,is,kid,n,seconds,features\n100,50,nan,nan,100,1,inception\n"
                                                "200,20,nan,nan,100,1,inception\n";
  fs::create_directories(dir + "/both_s0");
  std::ofstream(dir + "/both_s0/scores.csv") << "iteration,fid,n,seconds,features\n100,99,100,1,inception\n";
  eval::append_run_score(dir + "/both_s0", row(300, 10.0, 0.25));  // rewritten in the full header
  const auto groups = eval::load_seed_groups(dir);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].name, "both");
  ASSERT_EQ(groups[0].seeds.at(0).size(), 2u);
  EXPECT_EQ(groups[0].seeds.at(0).back().value("fid"), 10.0);
  EXPECT_EQ(groups[1].name, "new");
  ASSERT_EQ(groups[1].seeds.size(), 2u);
  EXPECT_EQ(groups[1].seeds.at(0).back().value("fid"), 30.0);
  EXPECT_EQ(groups[1].seeds.at(0).back().value("class_acc"), 0.75);
  EXPECT_EQ(groups[1].seeds.at(1).back().value("fid"), 20.0);
  EXPECT_TRUE(std::isnan(groups[1].seeds.at(1).back().value("class_acc")));
  // "new": last FID 30 and 20 over two seeds: mean 25, sd sqrt(50) = 7.07.
  EXPECT_NE(eval::seed_table(groups).find("| new | 2 | 200 | 0.750 | 25.0 ± 7.1 |"), std::string::npos)
      << eval::seed_table(groups);
  fs::create_directories(dir + "/old_s0");
  std::ofstream(dir + "/old_s0/fid.csv") << "iteration,fid,is,kid,n,seconds\n100,50,nan,nan,100,1\n";
  const std::string e = test::error_of([&] { eval::load_seed_groups(dir); });
  EXPECT_NE(e.find(dir + "/old_s0/fid.csv: the score table of a pre-release hamgan"), std::string::npos) << e;
}

TEST(CompareSeeds, ErrorsNameWhatIsWrong) {
  const std::string dir = test::fresh_dir("test_seed_stats", "errors");
  fs::create_directories(dir + "/plain/scores.csv.d");
  std::string e = test::error_of([&] { eval::load_seed_groups(dir + "/plain"); });
  EXPECT_NE(e.find("no " + dir + "/plain/<name>_s<seed>/scores.csv with rows"), std::string::npos) << e;
  e = test::error_of([&] { eval::load_seed_groups(dir + "/missing"); });
  EXPECT_NE(e.find("not a directory"), std::string::npos) << e;
  // A file that is not an earlier output is never replaced, and nothing is written.
  std::ofstream(dir + "/keep.md") << "my notes\n";
  e = test::error_of([&] { test::run_cli(cli::compare, "compare", {"--seeds", test::oracle_path("runs"), "--out", dir + "/keep"}); });
  EXPECT_NE(e.find("--out"), std::string::npos) << e;
  EXPECT_NE(e.find("keep.md"), std::string::npos) << e;
  EXPECT_EQ(read(dir + "/keep.md"), "my notes\n");
  EXPECT_FALSE(fs::exists(dir + "/keep.svg"));
  e = test::error_of([&] { test::run_cli(cli::compare, "compare", {"--seeds", dir, "--run", dir}); });
  EXPECT_NE(e.find("two forms"), std::string::npos) << e;
  e = test::error_of([&] { test::run_cli(cli::compare, "compare", {"--run", dir, "--out", dir + "/x", "--from", "3"}); });
  EXPECT_NE(e.find("--from applies to --seeds only"), std::string::npos) << e;
}

// A seed whose score table has two rows for one iteration: `compare --run` refuses it, and
// `compare --seeds` used it (either row could be its last score). Refused the same way.
TEST(CompareSeeds, TwoRowsOfOneIterationAreRefusedAsCompareRunRefusesThem) {
  const std::string dir = test::fresh_dir("test_seed_stats", "duplicate_rows");
  fs::create_directories(dir + "/a_s0");
  fs::create_directories(dir + "/a_s1");
  const std::string header = "iteration,n,seconds,features,fid\n";
  std::ofstream(dir + "/a_s0/scores.csv") << header << "100,10,1,inception,50\n200,10,1,inception,45\n200,10,1,inception,20\n";
  std::ofstream(dir + "/a_s1/scores.csv") << header << "100,10,1,inception,40\n200,10,1,inception,30\n";
  const std::string seeds = test::error_of([&] { test::run_cli(cli::compare, "compare", {"--seeds", dir}); });
  EXPECT_NE(seeds.find(dir + "/a_s0/scores.csv: iteration 200 has 2 rows (FID 45.0000 and 20.0000)"), std::string::npos)
      << seeds;
  const std::string runs = test::error_of(
      [&] { test::run_cli(cli::compare, "compare", {"--run", dir + "/a_s0", "--run", dir + "/a_s1", "--out", dir + "/cmp"}); });
  EXPECT_EQ(seeds, runs);
}

// Seeds scored with other sample counts (or networks) are not averaged or t-tested together.
TEST(CompareSeeds, SeedsScoredWithOtherSampleCountsAreRefused) {
  const std::string dir = test::fresh_dir("test_seed_stats", "counts");
  fs::create_directories(dir + "/a_s0");
  fs::create_directories(dir + "/b_s0");
  const std::string header = "iteration,n,seconds,features,fid\n";
  std::ofstream(dir + "/a_s0/scores.csv") << header << "100,2000,1,inception,50\n";
  std::ofstream(dir + "/b_s0/scores.csv") << header << "100,50,1,inception,40\n";
  const std::string e = test::error_of([&] { eval::load_seed_groups(dir); });
  EXPECT_NE(e.find(dir + "/b_s0/scores.csv was scored with 50 samples, " + dir + "/a_s0/scores.csv with 2000"),
            std::string::npos) << e;
}

// a_s0 and a_s00 both parse to seed 0: one replaced the other, so a group of three runs counted
// two seeds and its mean left one out. An error naming both folders.
TEST(CompareSeeds, TwoFoldersOfOneSeedNumberAreAnErrorNamingBoth) {
  const std::string dir = test::fresh_dir("test_seed_stats", "same_seed");
  const auto run = [&](const std::string& name, double fid) {
    fs::create_directories(dir + "/" + name);
    std::ofstream(dir + "/" + name + "/scores.csv") << "iteration,n,seconds,features,fid\n100,10,1,inception," << fid << "\n";
  };
  run("a_s0", 10), run("a_s00", 30), run("a_s1", 20);
  const std::string e = test::error_of([&] { test::run_cli(cli::compare, "compare", {"--seeds", dir}); });
  EXPECT_NE(e.find(dir + "/a_s0 and " + dir + "/a_s00 are both seed 0 of 'a'"), std::string::npos) << e;
  EXPECT_EQ(e, test::error_of([&] { eval::load_seed_groups(dir); }));
  // Distinct seed numbers of one name still group, every one counted.
  fs::remove_all(dir + "/a_s00");
  run("a_s2", 30);
  const auto groups = eval::load_seed_groups(dir);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].seeds.size(), 3u);
  EXPECT_NE(eval::seed_table(groups).find("| a | 3 | 100 | - | 20.0 ± 10.0 |"), std::string::npos) << eval::seed_table(groups);
}

}  // namespace test_seed_stats
