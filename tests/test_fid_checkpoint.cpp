// `hamgan fid --checkpoint` (samples scored in one pass, no files) against the same samples
// written by `hamgan sample` as PNG and read back. Inception weights: random,
// written by tests/oracle/fid_run.py.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "gan/cli/commands.h"
#include "gan/sample/sample_batches.h"
#include "gan/sample/sampler.h"
#include "io/decode.h"
#include "io/png.h"
#include "metrics/frechet.h"
#include "metrics/image_dir.h"
#include "metrics/inception.h"
#include "metrics/statistics.h"
#include "support/cli.h"
#include "support/oracle.h"
#include "support/tiny_checkpoint.h"

namespace test_fid_checkpoint {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_fid_checkpoint", name); }

std::string weights() { return test::oracle_path("inception_random.pth"); }

std::string fid_cli(const std::vector<std::string>& args) { return test::run_cli(cli::fid, "fid", args); }

double value_after(const std::string& text, const std::string& key) {
  const auto p = text.find(key + " ");
  if (p == std::string::npos) ADD_FAILURE() << "no '" << key << "' in: " << text;
  return p == std::string::npos ? NAN : std::stod(text.substr(p + key.size() + 1));
}

// Two fixed noise images as a "real" image directory.
std::string real_dir() {
  static const std::string d = [] {
    const std::string dir = fresh("real");
    fs::create_directories(dir + "/0");
    torch::manual_seed(3);
    for (int i = 0; i < 2; ++i)
      write_png(dir + "/0/" + std::to_string(i) + ".png", torch::randint(0, 256, {32, 32, 3}).to(torch::kUInt8));
    return dir;
  }();
  return d;
}

}  // namespace

// fid --checkpoint scores the 8-bit images `hamgan sample` writes (quantize), so its features
// equal extraction from the written PNGs up to summation order (1e-4 relative, the Inception
// oracle's tolerance), and the FID --checkpoint prints equals the FID of the PNGs' features
// to 1e-4 relative.
// The checkpoint's stored config names the weights (eval.inception): no --inception given.
TEST(FidCheckpoint, EqualsFidOfWrittenPngs) {
  unsetenv("HAMGAN_INCEPTION");
  const std::string dir = fresh("ck");
  const std::string ck = dir + "/ckpt_000000010.pt";
  test::write_tiny_checkpoint(ck, 10, true, 1, test::tiny_checkpoint_yaml("inception: " + weights()));
  const std::string ref = dir + "/ref.npz";
  fid_cli({"stats", "--images", real_dir(), "--out", ref, "--inception", weights(), "--threads", "2"});
  const std::string png = dir + "/png";
  std::vector<std::string> s = {"sample", "--checkpoint", ck, "-n", "3", "--out", png, "--seed", "9"};
  std::vector<char*> argv;
  for (auto& a : s) argv.push_back(a.data());
  ASSERT_EQ(cli::sample_cmd(static_cast<int>(argv.size()), argv.data()), 0);

  const std::string a = fid_cli({"--real", ref, "--checkpoint", ck, "--count", "3", "--seed", "9", "--threads", "2"});

  // The features themselves, through the library.
  const metrics::InceptionExtractor net(weights(), metrics::Resize::Torch, torch::kCPU);
  const CheckpointData c = load_checkpoint(ck);
  sample::SamplerOptions so;
  so.seed = 9;
  std::ostringstream warn;
  const sample::Sampler smp(c, so, warn);
  const auto items = sample::make_plan({0, 1, 2}, 3, 0);
  const auto fa_feat = metrics::extract_features(net, sample::sample_batches(smp, items, net, true), false).pool;
  const auto fb_feat =
      metrics::extract_features(net, metrics::image_batches(list_images(png), net, 50, 1), false).pool;
  EXPECT_TRUE(test::close(fa_feat, fb_feat, 1e-4, 1e-5));
  const auto rs = metrics::load_stats(ref), ps = metrics::compute_stats(fb_feat);
  const double fa = value_after(a, "fid"), fb = metrics::frechet_distance(rs.mu, rs.sigma, ps.mu, ps.sigma);
  EXPECT_GT(fa, 0);
  EXPECT_NEAR(fa, fb, 1e-4 * std::abs(fb)) << a;
}

}  // namespace test_fid_checkpoint
