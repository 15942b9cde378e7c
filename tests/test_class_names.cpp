// Class names go into classes.txt (one per line) and an export's config.json, both read by
// other programs: a class folder named in Latin-1 ("caf\xe9"), or with a newline, is refused by
// `train` and `prepare` naming it (before anything is written), and `sample` and `export` take a
// run's classes.txt only when it is that model's list of UTF-8 names (not 10^6 lines for a
// 10-class model).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/utf8.h"
#include "gan/cli/commands.h"
#include "io/png.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/tiny_checkpoint.h"

namespace test_class_names {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_class_names", name); }

// A folder of two classes, "a" and `bad` (which sorts after it), two gray images each.
std::string folder_with(const std::string& name, const std::string& bad) {
  const std::string dir = fresh(name);
  for (const std::string& c : {std::string("a"), bad}) {
    fs::create_directories(dir + "/" + c);
    for (int k = 0; k < 2; ++k)
      write_png(dir + "/" + c + "/" + std::to_string(k) + ".png", torch::full({32, 32, 1}, 50 * k, torch::kUInt8));
  }
  return dir;
}

}  // namespace

TEST(Utf8, ValidAndInvalidSequences) {
  size_t bad = 0;
  EXPECT_TRUE(valid_utf8("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(valid_utf8("caf\xe9", &bad));
  EXPECT_EQ(bad, 3u);
  EXPECT_FALSE(valid_utf8("\xff\xfe"));
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(valid_utf8("\xe6\x97"));          // cut short
}

TEST(ClassNames, TrainAndPrepareRefuseANameNoTextCanHold) {
  const std::string preset = std::string(std::getenv("HAMGAN_SOURCE_DIR")) + "/configs/fmnist32_quickstart.yaml";
  for (const auto& [name, bad, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"latin1", "caf\xe9", "'caf\\xe9' is not valid UTF-8"},
           {"bytes", "x\xff\xfe", "'x\\xff\\xfe' is not valid UTF-8"},
           {"newline", "two\nlines", "'two\\x0alines' holds a control character"}}) {
    SCOPED_TRACE(name);
    const std::string data = folder_with(name, bad);
    const std::string run = fresh(name + "_run");
    const std::string e = test::error_of([&] {
      test::run_cli(cli::train, "train", {"-c", preset, "--out", run, "--threads", "1", "data.path=" + data,
                                          "data.format=folder", "model.n_classes=2", "train.iterations=1"});
    });
    test::expect_names(e, {data, "class 1's name", why, "UTF-8"});
    EXPECT_FALSE(fs::exists(run + "/config.yaml"));
    const std::string pe = test::error_of(
        [&] { test::run_cli(cli::prepare, "prepare", {"--data", data, "--out", run + ".pack", "--resolution", "32"}); });
    test::expect_names(pe, {data, "class 1's name", why});
    EXPECT_FALSE(fs::exists(run + ".pack"));
  }
}

TEST(ClassNames, SampleAndExportTakeOnlyThisModelsList) {
  const std::string run = fresh("run");
  const std::string ck = run + "/checkpoints/ckpt_000000010.pt";
  test::write_tiny_checkpoint(ck, 10, true, 1, test::tiny_checkpoint_yaml());  // 3 classes
  const auto sample_names = [&](const std::string& name) {
    const std::string out = fresh("samples_" + name);
    test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", ck, "--out", out, "--per-class", "1"});
    std::ifstream in(out + "/classes.txt");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::ofstream(run + "/classes.txt") << "000 a\n001 b\n002 c\n";
  EXPECT_EQ(sample_names("good"), "000 a\n001 b\n002 c\n");
  {
    std::ofstream many(run + "/classes.txt");
    for (int k = 0; k < 1000000; ++k) many << k << " n" << k << "\n";
  }
  EXPECT_EQ(sample_names("many"), "");
  std::ofstream(run + "/classes.txt") << "000 a\n001 caf\xe9\n002 c\n";
  EXPECT_EQ(sample_names("latin1"), "");
  const std::string out = fresh("export");
  test::run_cli(cli::export_cmd, "export", {"--checkpoint", ck, "--out", out});
  std::ifstream in(out + "/config.json");
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(valid_utf8(json));
  EXPECT_EQ(json.find("caf"), std::string::npos);
}

}  // namespace test_class_names
