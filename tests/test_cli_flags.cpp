// The flags that mean one thing (gan/cli/common_flags.h) read the same in every command: each
// command's --help shows a shared flag with the same spelling, default and help text, --out
// and -n/--count with one spelling and one help prefix, and every command that needs --out
// and lacks it gives the one error kMissingOut.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "gan/cli/commands.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/oracle.h"

namespace test_cli_flags {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

struct Cmd {
  std::string label;
  int (*run)(int, char**);
  std::string name;
  std::vector<std::string> prefix;  // the sub-command, if any
};

const std::vector<Cmd>& all_commands() {
  static const std::vector<Cmd> c = {
      {"info", cli::info, "info", {}},
      {"prepare", cli::prepare, "prepare", {}},
      {"train", cli::train, "train", {}},
      {"bench train", cli::bench, "bench", {"train"}},
      {"bench context", cli::bench, "bench", {"context"}},
      {"sample", cli::sample_cmd, "sample", {}},
      {"export", cli::export_cmd, "export", {}},
      {"fid", cli::fid, "fid", {}},
      {"fid stats", cli::fid, "fid", {"stats"}},
      {"classifier train", cli::classifier, "classifier", {"train"}},
      {"compare", cli::compare, "compare", {}},
      {"dgap", cli::dgap, "dgap", {}},
  };
  return c;
}

std::string help_of(const Cmd& c) {
  std::vector<std::string> args = c.prefix;
  args.push_back("--help");
  return test::run_cli(c.run, c.name, args);
}

// The option lines of a cxxopts help, by long name, whitespace collapsed (cxxopts wraps the
// text at a column that depends on the command's longest option).
std::map<std::string, std::string> options_of(const std::string& help) {
  // An option's first line: "  -o, --out arg ..." or "      --data arg ..."; its text's
  // continuation lines are indented to the text's column, further than either.
  static const std::regex start(R"(^(  -\w, |      )--([\w-]+))");
  std::map<std::string, std::string> out;
  std::istringstream in(help);
  std::string line, current;
  for (std::smatch m; std::getline(in, line);) {
    if (std::regex_search(line, m, start)) current = m[2].str(), out[current] = "";
    else if (line.find_first_not_of(' ') == std::string::npos) current.clear();
    if (current.empty()) continue;
    std::istringstream words(line);
    for (std::string w; words >> w;) out[current] += (out[current].empty() ? "" : " ") + w;
  }
  return out;
}

}  // namespace

TEST(CliFlags, SharedFlagsReadTheSameInEveryCommand) {
  // Flags of one meaning: the whole line (spelling, default, help) is the same everywhere.
  const std::vector<std::string> same = {"batch", "channels", "resolution", "data", "features", "real", "metrics",
                                         "workers", "device", "threads"};
  std::map<std::string, std::pair<std::string, std::string>> first;  // flag -> {command, line}
  std::map<std::string, int> seen;
  std::map<std::string, int> out_seen, count_seen;
  for (const Cmd& c : all_commands()) {
    SCOPED_TRACE(c.label);
    const auto opts = options_of(help_of(c));
    ASSERT_FALSE(opts.empty());
    for (const std::string& f : same) {
      if (!opts.count(f)) continue;
      ++seen[f];
      const std::string& line = opts.at(f);
      // The classifier's and GAN training's --batch are other meanings, with their own help.
      if (f == "batch" && (line.find("training") != std::string::npos)) continue;
      auto [it, fresh] = first.emplace(f, std::make_pair(c.label, line));
      if (!fresh) {
        EXPECT_EQ(line, it->second.second) << "--" << f << " differs from " << it->second.first << "'s";
      }
    }
    if (opts.count("out")) {
      ++out_seen[c.label];
      EXPECT_EQ(opts.at("out").rfind("-o, --out arg where to write: ", 0), 0u) << opts.at("out");
    }
    if (opts.count("count")) {
      ++count_seen[c.label];
      EXPECT_EQ(opts.at("count").rfind("-n, --count arg number of images: ", 0), 0u) << opts.at("count");
      EXPECT_NE(opts.at("count").find("(default: "), std::string::npos) << opts.at("count");
    }
  }
  // Each shared flag appears in at least two commands (else it is not shared) and the ones the
  // config keys name say so.
  for (const char* f : {"batch", "channels", "resolution", "data", "workers", "device", "threads"})
    EXPECT_GE(seen[f], 2) << f;
  EXPECT_NE(first.at("channels").second.find("model.image_channels"), std::string::npos);
  EXPECT_NE(first.at("resolution").second.find("model.resolution"), std::string::npos);
  EXPECT_NE(first.at("data").second.find("data.path"), std::string::npos);
  EXPECT_NE(first.at("features").second.find("eval.features"), std::string::npos);
  EXPECT_NE(first.at("real").second.find("eval.real"), std::string::npos);
  EXPECT_NE(first.at("metrics").second.find("eval.metrics"), std::string::npos);
  EXPECT_NE(first.at("batch").second.find("(default: 50)"), std::string::npos) << first.at("batch").second;
  EXPECT_EQ(out_seen.size(), 7u);  // prepare train sample export fid-stats classifier compare
  EXPECT_EQ(count_seen.size(), 4u);  // sample fid fid-stats dgap
}

TEST(CliFlags, TrainingBatchesSayWhichBatch) {
  const auto bench = options_of(test::run_cli(cli::bench, "bench", {"train", "--help"}));
  const auto prep = options_of(test::run_cli(cli::prepare, "prepare", {"--help"}));
  EXPECT_EQ(bench.at("batch"), prep.at("batch"));
  EXPECT_NE(bench.at("batch").find("train.batch_size"), std::string::npos) << bench.at("batch");
  const auto clf = options_of(test::run_cli(cli::classifier, "classifier", {"train", "--help"}));
  EXPECT_NE(clf.at("batch").find("not the GAN's train.batch_size"), std::string::npos) << clf.at("batch");
}

TEST(CliFlags, MissingOutIsOneError) {
  const std::string dir = test::fresh_dir("test_cli_flags", "missing_out");
  fs::create_directories(dir + "/a");
  const std::string absent = dir + "/absent.pt";
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"train", [] { test::run_cli(cli::train, "train", {}); }},
      {"prepare", [&] { test::run_cli(cli::prepare, "prepare", {"--data", dir + "/a"}); }},
      {"sample", [&] { test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", absent}); }},
      {"export", [&] { test::run_cli(cli::export_cmd, "export", {"--checkpoint", absent}); }},
      {"classifier train", [&] { test::run_cli(cli::classifier, "classifier", {"train", "--data", dir + "/a"}); }},
      {"compare", [&] { test::run_cli(cli::compare, "compare", {"--run", dir + "/a", "--run", dir + "/a"}); }},
      {"fid stats", [&] { test::run_cli(cli::fid, "fid", {"stats", "--images", dir + "/a"}); }},
  };
  for (const auto& [label, f] : cases) EXPECT_EQ(test::error_of(f), cli::kMissingOut) << label;
}

// -n and --count are one flag in dgap as in sample and fid: the value reaches the check.
TEST(CliFlags, DgapTakesNAndCount) {
  const std::string dir = test::fresh_dir("test_cli_flags", "dgap");
  fs::create_directories(dir);
  for (const char* spelling : {"-n", "--count"}) {
    EXPECT_EQ(test::error_of([&] { test::run_cli(cli::dgap, "dgap", {"--run", dir, spelling, "-1"}); }),
              "-n/--count -1: expected >= 0")
        << spelling;
    // A valid count passes the flag's check and reaches the run (which has no checkpoints).
    const std::string e = test::error_of([&] { test::run_cli(cli::dgap, "dgap", {"--run", dir, spelling, "5"}); });
    EXPECT_NE(e.find("dgap: no checkpoints in " + dir), std::string::npos) << spelling << ": " << e;
  }
}

// --standing-batches in sample and export has train.ema_standing_batches's bound (one constant,
// kMaxStandingBatches), checked before the checkpoint is read (none exists here): 100001 is
// refused with the range, 100000 gets as far as the checkpoint. The flag reads the same in both.
TEST(CliFlags, StandingBatchesHaveTheConfigKeysBound) {
  const std::string dir = test::fresh_dir("test_cli_flags", "standing");
  fs::create_directories(dir);
  const std::string absent = dir + "/absent.pt";
  ASSERT_EQ(kMaxStandingBatches, 100000);
  std::map<std::string, std::string> help;
  for (const Cmd& c : all_commands()) {
    if (c.label != "sample" && c.label != "export") continue;
    SCOPED_TRACE(c.label);
    help[c.label] = options_of(help_of(c)).at("standing-batches");
    const auto run = [&](const std::string& n) {
      return test::error_of([&] {
        test::run_cli(c.run, c.name, {"--checkpoint", absent, "--out", dir + "/out", "--standing-batches", n});
      });
    };
    EXPECT_EQ(run("100001"), "--standing-batches 100001: expected 0..100000 (as train.ema_standing_batches)");
    EXPECT_EQ(run("-1"), "--standing-batches -1: expected 0..100000 (as train.ema_standing_batches)");
    const std::string e = run("100000");
    EXPECT_EQ(e.find("--standing-batches"), std::string::npos) << e;
    EXPECT_NE(e.find(absent), std::string::npos) << e;
    EXPECT_FALSE(fs::exists(dir + "/out"));
  }
  ASSERT_EQ(help.size(), 2u);
  EXPECT_EQ(help.at("sample"), help.at("export"));
}

// --json is one switch: alone, info prints the machine's facts (no config read); with --get KEY,
// that resolved value as JSON, for scripts (a section an object, every value a string as the
// config spells it).
TEST(CliFlags, InfoGetWithJsonPrintsTheValueAsJson) {
  const std::string cfg = test::source_path("configs/fmnist32_quickstart.yaml");
  EXPECT_EQ(test::run_cli(cli::info, "info", {"-c", cfg, "--get", "generator.context.type", "--json"}), "\"ham_nmf\"\n");
  const std::string data = test::run_cli(cli::info, "info", {"-c", cfg, "--get", "data", "--json"});
  EXPECT_EQ(data.front(), '{') << data;
  EXPECT_EQ(data.substr(data.size() - 2), "}\n") << data;
  EXPECT_NE(data.find("\"path\": \"/usr/share/datasets/fashion-mnist\""), std::string::npos) << data;
  const std::string e = test::error_of([&] { test::run_cli(cli::info, "info", {"-c", cfg, "--json"}); });
  EXPECT_NE(e.find("--json prints the machine's facts and reads no config"), std::string::npos) << e;
}

}  // namespace test_cli_flags
