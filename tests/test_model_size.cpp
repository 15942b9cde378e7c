// The parameter floor that `info` and `train` check against the machine's memory before they
// build anything: for every preset it is at most G's and D's real parameter count and at least
// half of it (so the check refuses nothing that fits and misses little that does not); a config
// far past any machine is refused naming the keys, before a byte of it is allocated.
#include <gtest/gtest.h>

#include <filesystem>

#include "gan/cli/commands.h"
#include "gan/config/config.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/models/model_size.h"
#include "gan/models/trace.h"
#include "support/cli.h"
#include "support/errors.h"

namespace test_model_size {

using namespace hamgan;
namespace fs = std::filesystem;

TEST(ModelSize, TheFloorIsBelowEveryPresetsCountAndNear) {
  const fs::path configs = fs::path(std::getenv("HAMGAN_SOURCE_DIR")) / "configs";
  int checked = 0;
  for (const auto& e : fs::directory_iterator(configs)) {
    if (e.path().extension() != ".yaml") continue;
    SCOPED_TRACE(e.path().string());
    const Config cfg = load_config(e.path().string());
    if (cfg.model.resolution > 32 && checked > 0 && e.path().filename().string().find("hamgan") == std::string::npos)
      continue;  // one 128 px preset is enough (each takes seconds to build)
    torch::NoGradGuard ng;
    const Generator g(cfg.model, cfg.generator);
    const Discriminator d(cfg.model, cfg.discriminator);
    const double ng_ = static_cast<double>(count_params(*g)), nd = static_cast<double>(count_params(*d));
    const double fg = static_cast<double>(generator_parameter_floor(cfg));
    const double fd = static_cast<double>(discriminator_parameter_floor(cfg));
    EXPECT_LE(fg, ng_);
    EXPECT_GE(fg, 0.5 * ng_);
    EXPECT_LE(fd, nd);
    EXPECT_GE(fd, 0.5 * nd);
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(ModelSize, AModelNoMachineHoldsIsRefusedBeforeItIsBuilt) {
  const std::string preset = std::string(std::getenv("HAMGAN_SOURCE_DIR")) + "/configs/fmnist32_quickstart.yaml";
  const std::string e = test::error_of([&] {
    test::run_cli(cli::info, "info", {"-c", preset, "generator.ch_mult=[1024,1024,1024,1024]", "generator.ch=4096"});
  });
  test::expect_names(e, {"generator.ch 4096", "with their ch_mult", "more than this machine's", "lower generator.ch"});
}

}  // namespace test_model_size
