// Configs that cannot be read as meant are errors naming the file or key (gan/config/config.h,
// core/config_reader.h): YAML aliases that recurse or explode, a second YAML document, empty
// overrides, settings that cannot work, keys that are not scalars.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gan/config/config.h"
#include "support/cli.h"
#include "support/errors.h"

namespace test_config_errors {

using namespace hamgan;

// A recursive alias (a stack overflow to follow) and a ten-line "billion laughs" (minutes to
// expand) are errors naming the file, at once.
TEST(ConfigErrors, RecursiveAndExponentialYamlAliasesAreErrors) {
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c)
    laughs += std::string(1, c) + ": &" + c + " [*" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) +
              ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + ", *" +
              char(c - 1) + ", *" + char(c - 1) + ", *" + char(c - 1) + "]\n";
  for (const std::string& yaml : {std::string("x: &m [*m]\n"), std::string("train: &t {a: *t}\n"), laughs}) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string e = test::error_of([&] { parse_config(yaml, "alias.yaml"); });
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
    EXPECT_NE(e.find("alias.yaml"), std::string::npos) << e;
    EXPECT_NE(e.find("alias"), std::string::npos) << e;
  }
}

// A second YAML document is an error, not ignored; `train.batch_size=` (or ~, null) is an error,
// not the built-in default over the file's value.
TEST(ConfigErrors, ASecondYamlDocumentAndEmptyOverridesAreErrors) {
  const std::string e = test::error_of([&] { parse_config("train: {batch_size: 8}\n---\ntrain: {batch_size: 4}\n", "two.yaml"); });
  EXPECT_NE(e.find("two.yaml: a second YAML document starts at line 2"), std::string::npos) << e;
  for (const std::string ov : {"train.batch_size=", "train.batch_size=~", "data.path=null"}) {
    const std::string m = test::error_of([&] { parse_config("train: {batch_size: 8}\n", "c.yaml", {ov}); });
    EXPECT_NE(m.find("'" + ov + "': expected a value after '='"), std::string::npos) << m;
  }
  EXPECT_EQ(parse_config("eval: {inception: w.pth}\n", "c.yaml", {"eval.inception=\"\""}).eval.inception, "");
}

// Settings that cannot work (Adam's beta 1, eps 0, a sample count beyond int32) are config errors
// naming the key, not failures deep in the optimizer or in `fid`.
TEST(ConfigErrors, SettingsThatCannotWorkAreConfigErrorsNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train.beta1=1", "'train.beta1': expected a value in [0, 1)"},
      {"train.beta2=1", "'train.beta2': expected a value in [0, 1)"},
      {"train.d_beta1=-1", "'train.d_beta1': expected a value in (-1, 1)"},
      {"train.d_beta1=1", "'train.d_beta1': expected a value in (-1, 1)"},
      {"train.adam_eps=0", "'train.adam_eps': expected a value in (0, 1]"},
      {"eval.fid_n=4294967296", "'eval.fid_n'"},
      {"generator.ch_mult=[4,4,4]", "'generator.ch_mult': expected 4 multipliers at model.resolution 32"},
      {"discriminator.ch_mult=[1,2,4,8,16]", "'discriminator.ch_mult': expected 4 multipliers at model.resolution 32"},
      {"discriminator.ch_mult=[2,0,4,4]", "'discriminator.ch_mult': expected integers in [1, 1024]"},
      {"train.class_group=3", "'train.class_group': expected a divisor of the micro-batch (batch_size / accumulate = 64)"}};
  for (const auto& [ov, want] : cases) {
    const std::string e = test::error_of([&] { parse_config("model: {resolution: 32}\n", "c.yaml", {ov}); });
    EXPECT_NE(e.find(want), std::string::npos) << ov << ": " << e;
  }
  // Runs of one class that the minibatch standard deviation's groups would straddle.
  const std::string m = test::error_of(
      [&] { parse_config("discriminator: {mbstd_group: 4}\n", "c.yaml", {"train.class_group=2"}); });
  EXPECT_NE(m.find("'train.class_group': with discriminator.mbstd_group 4, expected a multiple of it"), std::string::npos) << m;
  const std::string e = test::error_of([&] { parse_config("train: {[a, b]: 3}\n", "k.yaml"); });
  EXPECT_NE(e.find("k.yaml: a key under 'train'"), std::string::npos) << e;
}

// Messages that name the right thing and print numbers as written: an empty key part is the
// override's fault (not the preset's); a bound of 1,000,000 is not "1e+06" beside a value it
// refuses; an unbounded range is ">= 0", and inf, nan and numbers past a double say why; a value
// the key's range documents is one training accepts (image_channels: 1 or 3).
TEST(ConfigErrors, MessagesNameTheOverrideAndPrintNumbersAsWritten) {
  const auto e = [](const std::string& ov) { return test::error_of([&] { parse_config("train: {}\n", "c.yaml", {ov}); }); };
  EXPECT_NE(e("train.=1").find("override 'train.=1': empty key part"), std::string::npos) << e("train.=1");
  EXPECT_NE(e("train.r1_gamma=1000001").find("expected a number in [0, 1000000], got 1000001"), std::string::npos)
      << e("train.r1_gamma=1000001");
  EXPECT_NE(e("train.time_limit_minutes=inf").find("expected a finite number >= 0, got 'inf' (not a finite number)"),
            std::string::npos) << e("train.time_limit_minutes=inf");
  EXPECT_NE(e("train.g_lr=1e-320").find("got '1e-320' (too small for a double"), std::string::npos) << e("train.g_lr=1e-320");
  EXPECT_NE(e("train.g_lr=1e999").find("got '1e999' (too large for a double"), std::string::npos) << e("train.g_lr=1e999");
  for (const char* c : {"2", "4"})
    EXPECT_NE(e(std::string("model.image_channels=") + c).find("expected 1 or 3"), std::string::npos) << c;
  EXPECT_EQ(parse_config("train: {}\n", "c.yaml", {"model.image_channels=3"}).model.image_channels, 3);
}

// A chain of `base:` files deeper than any preset needs (40 here) is refused at once, naming the
// first file, instead of being resolved in time quadratic in its length.
TEST(ConfigErrors, ABaseChainPastThirtyTwoIsRefused) {
  const std::string dir = test::fresh_dir("test_config_errors", "chain");
  std::filesystem::create_directories(dir);
  for (int i = 0; i < 40; ++i)
    std::ofstream(dir + "/c" + std::to_string(i) + ".yaml") << "base: c" << i + 1 << ".yaml\n";
  std::ofstream(dir + "/c40.yaml") << "train: {batch_size: 8}\n";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string e = test::error_of([&] { load_config(dir + "/c0.yaml"); });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  test::expect_names(e, {dir + "/c0.yaml", "a chain of more than 32 bases"});
  EXPECT_EQ(load_config(dir + "/c30.yaml").train.batch_size, 8);  // ten links are fine
}

}  // namespace test_config_errors
