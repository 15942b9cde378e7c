// The one rule for outputs (io/output_path.h): an existing file is replaced only when it is an
// earlier output of the same kind, recognised by its content. The rule itself, the writers
// that apply it (write_png, npz::write), and the commands that check before any work:
// `sample --grid/--interpolate` (and its other late checks), `fid stats --out` and `dgap --run`'s
// DIR/d_gap.csv.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gan/cli/commands.h"
#include "io/decode.h"
#include "io/npz.h"
#include "io/output_path.h"
#include "io/png.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/scores_csv.h"
#include "support/process.h"
#include "support/tiny_checkpoint.h"

namespace test_output_paths {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_output_paths", name); }

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// What a training run holds that must never become a PNG or an .npz: RUN/config.yaml,
// RUN/classes.txt, RUN/scores.csv, RUN/checkpoints/ckpt_000000020.pt and RUN/best_ckpt_000000020.pt.
struct RunFiles {
  std::string dir, config, classes, fid_csv, ckpt, best;
};

RunFiles make_run(const std::string& name) {
  RunFiles r;
  r.dir = fresh(name);
  fs::create_directories(r.dir + "/checkpoints");
  r.config = r.dir + "/config.yaml", r.classes = r.dir + "/classes.txt", r.fid_csv = r.dir + "/scores.csv";
  r.ckpt = r.dir + "/checkpoints/ckpt_000000020.pt", r.best = r.dir + "/best_ckpt_000000020.pt";
  write_text(r.config, test::tiny_checkpoint_yaml());
  write_text(r.classes, "000 n01\n001 n02\n002 n03\n");
  test::write_scores_csv(r.dir, {{20, "12.5"}});
  test::write_tiny_checkpoint(r.ckpt, 20, true, 1, test::tiny_checkpoint_yaml());
  fs::copy_file(r.ckpt, r.best);
  return r;
}

// Every file of `dir` (recursively) with its bytes: what "nothing was written" compares.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) m[e.path().string()] = test::read_text(e.path().string());
  return m;
}

void expect_has(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "'" << p << "' not in: " << text;
}

std::string sample_error(const std::vector<std::string>& args) {
  return test::error_of([&] { test::run_cli(cli::sample_cmd, "sample", args); });
}

torch::Tensor gray(int64_t v) { return torch::full({8, 8, 1}, v, torch::kUInt8); }

}  // namespace

// The rule on its own: absent, or the same kind by content; otherwise an error naming the
// option, the path, what was expected and what is there.
TEST(OutputPath, SameKindByContentElseRefused) {
  const RunFiles run = make_run("rule");
  const std::string png = run.dir + "/grid.png";
  EXPECT_EQ(test::error_of([&] { io::check_output_path(png, io::png_output(), "--grid"); }), "(no error)");
  write_png(png, gray(0));
  EXPECT_EQ(test::error_of([&] { io::check_output_path(png, io::png_output(), "--grid"); }), "(no error)");

  // A checkpoint, a score table, a config and a copy of the best checkpoint are not PNGs, whatever the name.
  for (const auto& [path, found] : std::vector<std::pair<std::string, std::string>>{
           {run.ckpt, "a zip archive whose first member is"},
           {run.fid_csv, "a text file whose first line is 'iteration,n,seconds,features,fid'"},
           {run.config, "a text file whose first line is"},
           {run.best, "a zip archive"}}) {
    const std::string e = test::error_of([&] { io::check_output_path(path, io::png_output(), "--grid"); });
    expect_has(e, {"--grid " + path + " exists and is not a PNG image", found, "nothing was written"});
  }
  // A checkpoint is a zip archive like an .npz: the first member tells them apart.
  const std::string npz = run.dir + "/stats.npz";
  npz::write(npz, {{"mu", torch::zeros({3})}});
  EXPECT_EQ(test::error_of([&] { io::check_output_path(npz, io::npz_output(), "--out"); }), "(no error)");
  expect_has(test::error_of([&] { io::check_output_path(run.ckpt, io::npz_output(), "--out"); }),
             {run.ckpt, "is not an .npz of arrays", "zip archive whose first member is"});
  expect_has(test::error_of([&] { io::check_output_path(png, io::npz_output(), "--out"); }), {png, "(it is a PNG image)"});
  // A table is recognised by its header line.
  const io::OutputKind table = io::text_output("a fid table", {"iteration,n,seconds,features,fid"});
  EXPECT_EQ(test::error_of([&] { io::check_output_path(run.fid_csv, table); }), "(no error)");
  expect_has(test::error_of([&] { io::check_output_path(run.config, table); }), {run.config, "is not a fid table"});

  // Folders, missing folders, empty files and links to nothing.
  expect_has(test::error_of([&] { io::check_output_path(run.dir + "/checkpoints", io::png_output(), "--grid"); }),
             {"checkpoints exists and is not a PNG image (it is a directory)"});
  expect_has(test::error_of([&] { io::check_output_path(run.dir + "/checkpoints/", io::png_output(), "--grid"); }),
             {"names a folder, not a file"});
  expect_has(test::error_of([&] { io::check_output_path(run.dir + "/nope/g.png", io::png_output(), "--grid"); }),
             {"--grid " + run.dir + "/nope/g.png", "its folder " + run.dir + "/nope does not exist"});
  write_text(run.dir + "/empty.png", "");
  expect_has(test::error_of([&] { io::check_output_path(run.dir + "/empty.png", io::png_output()); }), {"an empty file"});
  fs::create_symlink(run.dir + "/gone", run.dir + "/link.png");
  expect_has(test::error_of([&] { io::check_output_path(run.dir + "/link.png", io::png_output()); }),
             {"a symbolic link to nothing"});
}

// write_png and npz::write apply the rule themselves: the file stays byte for byte, no temporary is left.
TEST(OutputPath, WritersRefuseAndLeaveTheFileAsItWas) {
  const RunFiles run = make_run("writers");
  const auto before = snapshot(run.dir);
  for (const std::string& p : {run.ckpt, run.fid_csv, run.config})
    expect_has(test::error_of([&] { write_png(p, gray(7)); }), {p, "is not a PNG image"});
  for (const std::string& p : {run.ckpt, run.best, run.config})
    expect_has(test::error_of([&] { npz::write(p, {{"mu", torch::zeros({2})}}); }), {p, "is not an .npz of arrays"});
  EXPECT_EQ(snapshot(run.dir), before);
  // The same kind is replaced.
  const std::string png = run.dir + "/a.png";
  write_png(png, gray(7));
  write_png(png, gray(9));
  EXPECT_NEAR(to_tensor(decode_image(png)).max().item<double>(), 9.0 / 255, 1e-6);
  const std::string stats = run.dir + "/s.npz";
  npz::write(stats, {{"mu", torch::zeros({2})}});
  npz::write(stats, {{"mu", torch::ones({2})}});
  EXPECT_DOUBLE_EQ(npz::read(stats).at("mu").sum().item<double>(), 2.0);
}

// `sample --grid/--interpolate` named a checkpoint, fid.csv or the --checkpoint itself: each
// became a PNG. Now refused before the checkpoint is sampled: no sample folder either.
TEST(SampleOutputs, GridAndInterpolationNeverReplaceAnotherFile) {
  const RunFiles run = make_run("sample");
  const auto before = snapshot(run.dir);
  const std::string out = fresh("sample_out");
  for (const auto& [flag, target] : std::vector<std::pair<std::string, std::string>>{
           {"--interpolate", run.ckpt}, {"--grid", run.fid_csv}, {"--grid", run.ckpt}, {"--grid", run.config}}) {
    const std::string e = sample_error({"--checkpoint", run.ckpt, "--out", out, "-n", "3", flag, target, "--threads", "1"});
    expect_has(e, {flag + " " + target + " exists and is not a PNG image"});
    EXPECT_FALSE(fs::exists(out)) << flag << " " << target;
  }
  EXPECT_EQ(snapshot(run.dir), before);
  // An earlier grid is replaced.
  const std::string grid = fresh("sample_grid") + ".png";
  for (int i = 0; i < 2; ++i)
    test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", run.ckpt, "--grid", grid, "--cols", "2", "--threads", "1"});
  EXPECT_EQ(to_tensor(decode_image(grid)).size(0), 3);
}

// `--steps 1`, `--cols 0` and a --grid in a missing folder failed after every sample was
// written; so did two pictures of one path (the second replaced the first) and a grid inside
// --out (scored as a sample by `fid --fake`). Each fails before the first sample.
TEST(SampleOutputs, LateChecksComeBeforeAnySample) {
  const RunFiles run = make_run("late");
  const std::string out = fresh("late_out"), pics = fresh("late_pics");
  fs::create_directories(pics);
  const std::vector<std::string> base = {"--checkpoint", run.ckpt, "--out", out, "-n", "3", "--threads", "1"};
  const auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return extra;
  };
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--interpolate", pics + "/i.png", "--steps", "1"}, {"--steps 1: expected 2..256"}},
      {{"--grid", pics + "/g.png", "--cols", "0"}, {"--cols 0: expected 1..256"}},
      {{"--grid", pics + "/missing/g.png"}, {"--grid " + pics + "/missing/g.png", "does not exist"}},
      {{"--grid", pics + "/a.png", "--interpolate", pics + "/./a.png"}, {"name the same file"}},
      {{"--grid", out + "/grid.png"}, {"lies inside --out " + out}},
  };
  for (const auto& [extra, parts] : cases) {
    expect_has(sample_error(with(extra)), parts);
    EXPECT_FALSE(fs::exists(out)) << extra[0] << " " << extra[1];
  }
  EXPECT_TRUE(fs::is_empty(pics));
}

// The run's class names go to OUT/classes.txt: with --overwrite, a file of that name that is
// not a class list stays, and nothing is sampled.
TEST(SampleOutputs, ClassesTxtReplacesOnlyAClassList) {
  const RunFiles run = make_run("classes");
  const std::string out = fresh("classes_out");
  fs::create_directories(out);
  write_text(out + "/classes.txt", "my notes about this folder\n");
  const std::string e = sample_error({"--checkpoint", run.ckpt, "--out", out, "-n", "3", "--overwrite", "--threads", "1"});
  expect_has(e, {"--out " + out + "/classes.txt exists and is not a class list", "my notes"});
  EXPECT_EQ(test::read_text(out + "/classes.txt"), "my notes about this folder\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
  // An earlier sample's class list is replaced.
  write_text(out + "/classes.txt", "000 old\n");
  test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", run.ckpt, "--out", out, "-n", "3", "--overwrite", "--threads", "1"});
  EXPECT_EQ(test::read_text(out + "/classes.txt"), test::read_text(run.classes));
}

// `sample --out RUN --overwrite`, RUN the checkpoint's own run folder, replaced RUN/classes.txt
// with its copy of itself: a training run's folder is refused before any image, naming it, and
// every file of the run stays as it was (classes.txt not even rewritten), no class folder added.
TEST(SampleOutputs, ARunFolderIsNeverAnOut) {
  const RunFiles run = make_run("run_as_out");
  const auto before = snapshot(run.dir);
  const auto classes_time = fs::last_write_time(run.classes);
  const auto entries = std::distance(fs::directory_iterator(run.dir), fs::directory_iterator());
  const std::string e =
      sample_error({"--checkpoint", run.ckpt, "--out", run.dir, "-n", "3", "--overwrite", "--threads", "1"});
  expect_has(e, {"--out " + run.dir + ": is a training run's folder (it holds config.yaml)",
                 "sample writes none of a run's files"});
  EXPECT_EQ(snapshot(run.dir), before);
  EXPECT_EQ(fs::last_write_time(run.classes), classes_time);
  EXPECT_EQ(std::distance(fs::directory_iterator(run.dir), fs::directory_iterator()), entries);
}

// `fid stats --out` replaced config.yaml and best_ckpt_*.pt with statistics. Refused before the
// feature network is even loaded (the weights named here do not exist).
TEST(FidStatsOutput, NeverReplacesAnotherFile) {
  const RunFiles run = make_run("stats");
  const std::string images = fresh("stats_images");
  fs::create_directories(images);
  for (int k = 0; k < 2; ++k) write_png(images + "/" + std::to_string(k) + ".png", gray(40 * k));
  const std::string disguised = run.dir + "/ref.npz";  // a checkpoint under an .npz name
  fs::copy_file(run.ckpt, disguised);
  const auto before = snapshot(run.dir);
  const auto stats_error = [&](const std::string& out) {
    return test::error_of([&] {
      test::run_cli(cli::fid, "fid", {"stats", "--images", images, "--out", out, "--inception", run.dir + "/no.pth",
                                      "--threads", "1"});
    });
  };
  for (const std::string& p : {run.config, run.best})
    expect_has(stats_error(p), {"--out " + p + ": expected a file name ending in .npz"});
  expect_has(stats_error(disguised), {"--out " + disguised + " exists and is not an .npz of arrays"});
  expect_has(stats_error(run.dir + "/nope/ref.npz"), {"does not exist"});
  EXPECT_EQ(snapshot(run.dir), before);
  // A free path gets as far as the feature network.
  expect_has(stats_error(run.dir + "/new.npz"), {"no.pth"});
}

// `dgap --run DIR` replaced whatever DIR/d_gap.csv held with its table. A file of that name that
// is not an earlier dgap table (here a copy of the run's score table) is refused before any
// checkpoint is read, naming the file and what was expected, and stays byte for byte.
TEST(DgapOutput, ReplacesOnlyAnEarlierDgapTable) {
  const RunFiles run = make_run("dgap");
  const std::string table = run.dir + "/d_gap.csv";
  fs::copy_file(run.fid_csv, table);
  const auto before = snapshot(run.dir);
  const auto dgap_error = [&] {
    return test::error_of([&] { test::run_cli(cli::dgap, "dgap", {"--run", run.dir, "-n", "2", "--threads", "1"}); });
  };
  expect_has(dgap_error(), {table + " exists and is not the table of an earlier `hamgan dgap`",
                            "a text file whose first line is 'iteration,n,seconds,features,fid'", "nothing was written"});
  EXPECT_EQ(snapshot(run.dir), before);
  // An earlier dgap table passes the check: a run without checkpoints gets as far as them.
  const std::string earlier = fresh("dgap_earlier");
  fs::create_directories(earlier + "/checkpoints");
  write_text(earlier + "/d_gap.csv", "iteration,d_train,d_test,d_fake,gap,n\n20,0.1,0.2,-0.3,-0.1,2\n");
  const std::string e =
      test::error_of([&] { test::run_cli(cli::dgap, "dgap", {"--run", earlier, "-n", "2", "--threads", "1"}); });
  expect_has(e, {"dgap: no checkpoints in " + earlier});
}

// A run whose data holds more classes than its model (the tiny 3-class checkpoint over
// Fashion-MNIST's 10) is a named error before any scoring, not an index error inside D.
TEST(DgapOutput, DataWithMoreClassesThanTheModelIsNamed) {
  const RunFiles run = make_run("dgap_classes");
  const auto before = snapshot(run.dir);
  const std::string e =
      test::error_of([&] { test::run_cli(cli::dgap, "dgap", {"--run", run.dir, "-n", "2", "--threads", "1"}); });
  expect_has(e, {"has 10 classes but its model was trained with model.n_classes=3", run.dir + "/config.yaml"});
  EXPECT_EQ(snapshot(run.dir), before);
}

}  // namespace test_output_paths
