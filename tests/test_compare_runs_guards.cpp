// `hamgan compare` on tables that cannot be ranked as they stand and on --out paths that name
// no file: a FID that is not finite ranks last and is never a run's best; two rows of one
// iteration are an error naming the file; `--out dir/` (hidden dir/.csv and dir/.png) and a
// missing folder are refused before any run is read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gan/cli/commands.h"
#include "gan/eval/compare_runs.h"
#include "io/png.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/scores_csv.h"
#include "support/process.h"

namespace test_compare_runs_guards {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_compare_runs_guards", name); }

// DIR/scores.csv with rows {iteration, fid as written}: written as
// text, since a hand-edited or foreign table is what holds "nan" or a repeated iteration.
std::string make_run(const std::string& dir, const std::vector<std::pair<int64_t, std::string>>& rows) {
  return test::write_scores_csv(dir, rows);
}

std::string compare(const std::vector<std::string>& args) { return test::run_cli(cli::compare, "compare", args); }

}  // namespace

// A run whose last FID is nan ranked first (nan < x and x < nan are both false); a nan row
// before the finite ones became the run's best.
TEST(CompareGuards, NonFiniteFidRanksLastAndIsNeverBest) {
  const std::string root = fresh("nan");
  const std::string a = make_run(root + "/a", {{100, "60"}, {200, "40"}, {300, "nan"}});  // diverged at the end
  const std::string b = make_run(root + "/b", {{100, "nan"}, {200, "30"}, {300, "35"}});  // a failed early score
  const std::string c = make_run(root + "/c", {{100, "50"}});
  const std::string d = make_run(root + "/d", {{100, "nan"}});
  const std::string out = compare({"--run", a, "--run", b, "--run", c, "--run", d, "--out", root + "/cmp"});
  EXPECT_NE(out.find("| 1 | b | 300 | 35.0 |"), std::string::npos) << out;
  EXPECT_NE(out.find("| 2 | c | 100 | 50.0 |"), std::string::npos) << out;
  EXPECT_NE(out.find("| 3 | a | 300 | nan |"), std::string::npos) << out;
  EXPECT_NE(out.find("| 4 | d | 100 | nan |"), std::string::npos) << out;
  EXPECT_NE(out.find("| 40.0 (200) |"), std::string::npos) << "a's best is its finite 40: " << out;
  EXPECT_NE(out.find("| 30.0 (200) |"), std::string::npos) << "b's best is not its nan row: " << out;
  EXPECT_NE(out.find("| none |"), std::string::npos) << "d has no best: " << out;
  EXPECT_NE(out.find("note: a: FID is not finite at iteration 300 (ranked last; never its best)"), std::string::npos) << out;
  EXPECT_NE(out.find("note: b: FID is not finite at iteration 100 (never its best)"), std::string::npos) << out;
  const auto runs = eval::summarize_runs({a, b, d});
  EXPECT_EQ(runs[0].best_iteration, 200);
  EXPECT_DOUBLE_EQ(runs[0].best_fid, 40);
  EXPECT_EQ(runs[1].best_iteration, 200);
  EXPECT_DOUBLE_EQ(runs[1].best_fid, 30);
  EXPECT_EQ(runs[2].best_iteration, -1);
  const std::string csv = test::read_text(root + "/cmp.csv");
  // run,iteration,best_iteration,img_s,features,fid,... then best_fid,...: a's last fid is empty.
  EXPECT_NE(csv.find("\na,300,200,,inception,,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",40.0000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nd,100,,,inception,,"), std::string::npos) << csv;
}

// Two rows for one iteration: the later-sorted duplicate was "best". Which score is the
// checkpoint's cannot be told: an error naming the table and the iteration, nothing written.
TEST(CompareGuards, DuplicateIterationRowsAreAnError) {
  const std::string root = fresh("duplicates");
  const std::string a = make_run(root + "/a", {{100, "50"}, {200, "45"}, {100, "20"}});
  const std::string b = make_run(root + "/b", {{100, "40"}});
  const std::string e = test::error_of([&] { compare({"--run", a, "--run", b, "--out", root + "/cmp"}); });
  EXPECT_NE(e.find(a + "/scores.csv: iteration 100 has 2 rows"), std::string::npos) << e;
  EXPECT_NE(e.find("50.0000"), std::string::npos) << e;
  EXPECT_NE(e.find("20.0000"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(root + "/cmp.csv"));
  EXPECT_FALSE(fs::exists(root + "/cmp.png"));
}

// A negative FID (a value no Frechet distance takes) was ranked as the run's best. Refused when
// the table is read, naming the file, its line and the column; nothing is written.
TEST(CompareGuards, ANegativeFidIsRefusedNotRankedBest) {
  const std::string root = fresh("negative");
  const std::string a = make_run(root + "/a", {{100, "50"}, {200, "-12.5"}, {300, "45"}});
  const std::string b = make_run(root + "/b", {{100, "40"}});
  const std::string e = test::error_of([&] { compare({"--run", a, "--run", b, "--out", root + "/cmp"}); });
  EXPECT_NE(e.find(a + "/scores.csv:3: column 'fid' is '-12.5'; expected a value in [0, inf)"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(root + "/cmp.csv"));
  EXPECT_FALSE(fs::exists(root + "/cmp.png"));
}

// `--out dir/` wrote the hidden files dir/.png and dir/.csv; `--out x.csv` wrote x.csv.csv; a
// missing folder failed only after the figure was drawn.
TEST(CompareGuards, OutMustNameFilesInAnExistingFolder) {
  const std::string root = fresh("out");
  const std::string a = make_run(root + "/a", {{100, "50"}});
  const std::string b = make_run(root + "/b", {{100, "40"}});
  fs::create_directories(root + "/figs");
  for (const std::string& bad : {root + "/figs/", root + "/figs/."}) {
    const std::string e = test::error_of([&] { compare({"--run", a, "--run", b, "--out", bad}); });
    EXPECT_NE(e.find("names a folder"), std::string::npos) << bad << ": " << e;
  }
  const std::string empty = test::error_of([&] { compare({"--run", a, "--run", b, "--out", ""}); });
  EXPECT_NE(empty.find("--out '': empty"), std::string::npos) << empty;
  EXPECT_TRUE(fs::is_empty(root + "/figs"));
  const std::string e = test::error_of([&] { compare({"--run", a, "--run", b, "--out", root + "/nope/cmp"}); });
  EXPECT_NE(e.find(root + "/nope does not exist"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(root + "/nope"));

  const std::string out = compare({"--run", a, "--run", b, "--out", root + "/figs/cmp.csv"});
  EXPECT_NE(out.find("wrote " + root + "/figs/cmp.png and " + root + "/figs/cmp.csv"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(root + "/figs/cmp.png"));
  EXPECT_TRUE(fs::exists(root + "/figs/cmp.csv"));
  EXPECT_FALSE(fs::exists(root + "/figs/cmp.csv.csv"));
  compare({"--run", a, "--run", b, "--out", root + "/figs/cmp.png"});  // its own earlier output may go
  EXPECT_EQ(std::distance(fs::directory_iterator(root + "/figs"), fs::directory_iterator()), 2);

  // A PNG at PREFIX.png that is not a PNG, or a PNG with no compare table beside it (a run's fid.png).
  std::ofstream(root + "/x.png") << "not a picture";
  std::string e2 = test::error_of([&] { compare({"--run", a, "--run", b, "--out", root + "/x"}); });
  EXPECT_NE(e2.find(root + "/x.png exists and is not a PNG image"), std::string::npos) << e2;
  write_png(root + "/a/fid.png", torch::zeros({4, 4, 3}, torch::kUInt8));
  fs::remove(a + "/scores.csv");
  make_run(root + "/a2", {{100, "50"}});
  e2 = test::error_of([&] { compare({"--run", root + "/a2", "--run", b, "--out", a + "/fid"}); });
  EXPECT_NE(e2.find(a + "/fid.png exists and is not the output of an earlier `hamgan compare`"), std::string::npos) << e2;
  EXPECT_EQ(test::read_text(root + "/x.png"), "not a picture");
}

}  // namespace test_compare_runs_guards
