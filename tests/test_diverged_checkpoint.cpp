// A checkpoint whose generator has diverged (NaN weights, so NaN images) is an error naming it
// in every command that reads its generator: `sample` (not all-black PNGs and exit 0), `fid
// --checkpoint` (not a finite FID blamed on "duplicated images"), `fid --no-quantize` (not an
// eigen-decomposition failure) and `export` (not a file of non-finite tensors).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "gan/checkpoint/checkpoint.h"
#include "gan/cli/commands.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/models/init.h"
#include "io/png.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/random_classifier.h"
#include "support/tiny_checkpoint.h"

namespace test_diverged_checkpoint {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_diverged_checkpoint", name); }

// The tiny checkpoint's model with every G and EMA G weight NaN.
std::string nan_checkpoint() {
  static const std::string path = [] {
    const std::string p = fresh("run") + "/checkpoints/ckpt_000000010.pt";
    const Config cfg = parse_config(test::tiny_checkpoint_yaml(), "tiny checkpoint config");
    Generator g(cfg.model, cfg.generator), g_ema(cfg.model, cfg.generator);
    Discriminator d(cfg.model, cfg.discriminator);
    {
      torch::NoGradGuard ng;
      for (auto* m : {&g, &g_ema})
        for (auto& w : (*m)->parameters()) w.fill_(std::nanf(""));
    }
    torch::optim::Adam og(g->parameters()), od(d->parameters());
    CheckpointWrite w;
    w.iteration = 10;
    w.config_yaml = to_yaml(cfg.resolved);
    w.g = g.get(), w.d = d.get(), w.g_ema = g_ema.get(), w.opt_g = &og, w.opt_d = &od;
    fs::create_directories(fs::path(p).parent_path());
    save_checkpoint(p, w);
    return p;
  }();
  return path;
}

void expect_names_divergence(const std::string& e) {
  EXPECT_NE(e.find(nan_checkpoint()), std::string::npos) << e;
  EXPECT_NE(e.find("not finite"), std::string::npos) << e;
  EXPECT_NE(e.find("diverged"), std::string::npos) << e;
}

}  // namespace

TEST(DivergedCheckpoint, SampleRefusesAndWritesNoImage) {
  const std::string out = fresh("samples");
  expect_names_divergence(test::sample_error({"--checkpoint", nan_checkpoint(), "--out", out, "--per-class", "2"}));
  int images = 0;
  if (fs::exists(out))
    for (const auto& e : fs::recursive_directory_iterator(out)) images += e.path().extension() == ".png";
  EXPECT_EQ(images, 0);
}

TEST(DivergedCheckpoint, FidRefusesQuantizedOrNot) {
  const std::string clf = test::write_random_classifier(fresh("clf") + ".pt", 3);
  const std::string real = fresh("real");  // 3 classes of 2 gray noise images, the tiny GAN's kind
  torch::manual_seed(2);
  for (int c = 0; c < 3; ++c) {
    fs::create_directories(real + "/" + std::to_string(c));
    for (int k = 0; k < 2; ++k)
      write_png(real + "/" + std::to_string(c) + "/" + std::to_string(k) + ".png",
                torch::randint(0, 256, {32, 32, 1}, torch::kLong).to(torch::kUInt8));
  }
  for (const bool quantize : {true, false}) {
    SCOPED_TRACE(quantize);
    std::vector<std::string> args = {"--checkpoint", nan_checkpoint(), "--real", real,
                                     "--features", clf, "-n", "6"};
    if (!quantize) args.push_back("--no-quantize");
    expect_names_divergence(test::fid_error(args));
  }
}

TEST(DivergedCheckpoint, ExportRefusesAndWritesNothing) {
  const std::string out = fresh("export");
  std::string e = "(no error)";
  try {
    test::run_cli(cli::export_cmd, "export", {"--checkpoint", nan_checkpoint(), "--out", out});
  } catch (const Error& err) {
    e = err.what();
  }
  expect_names_divergence(e);
  EXPECT_FALSE(fs::exists(out + "/model.safetensors"));
}

}  // namespace test_diverged_checkpoint
