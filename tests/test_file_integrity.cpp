// Stored files are checked when read (gan/checkpoint/checkpoint.h, metrics/statistics.h,
// io/torch_file.h): a checkpoint with changed bytes or an edited stored config, broken FID
// statistics and a directory where a weights file belongs are refused, naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "gan/checkpoint/checkpoint.h"
#include "gan/cli/commands.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "io/npz.h"
#include "io/torch_file.h"
#include "io/zip_reader.h"
#include "metrics/statistics.h"
#include "support/cli.h"
#include "support/errors.h"
#include "io/png.h"
#include "support/tiny_checkpoint.h"

namespace test_file_integrity {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

// A path of this test, emptied, not created.
std::string fresh_path(const std::string& name) { return test::fresh_dir("test_file_integrity", name); }

std::string tiny_checkpoint(const std::string& name) { return test::tiny_checkpoint_in(fresh_path(name)); }

using test::expect_names;
using test::fid_error;
using test::sample_error;

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

// sample and fid refuse a checkpoint whose tensor bytes changed, naming the file.
TEST(FileIntegrity, FlippedCheckpointIsRefusedBySampleAndFid) {
  const std::string ck = tiny_checkpoint("flip");
  auto b = read_all(ck);
  size_t at = 0;
  io::for_each_zip_member(b, ck, 1 << 20, [&](const std::string& name, const uint8_t* p, size_t n) {
    if (!at && name.find("/data/") != std::string::npos && n >= 16) at = static_cast<size_t>(p - b.data()) + n / 2;
  });
  ASSERT_GT(at, 0u);
  for (size_t k = 0; k < 4; ++k) b[at + k] ^= 0xff;
  write_all(ck, b);
  const std::string out = fresh_path("flip_out");
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3"}), {ck, "CRC mismatch"});
  EXPECT_FALSE(fs::exists(out));
  expect_names(fid_error({"--real", "x.npz", "--checkpoint", ck, "-n", "3"}), {ck, "CRC mismatch"});
}

// Broken FID statistics are refused when read: NaN, not symmetric, not PSD, wrong shapes.
TEST(FileIntegrity, BrokenFidStatisticsAreRefusedWhenRead) {
  const std::string dir = fresh_path("npz");
  fs::create_directories(dir);
  const auto write = [&](const std::string& name, torch::Tensor mu, torch::Tensor sigma) {
    npz::write(dir + "/" + name, {{"mu", mu}, {"sigma", sigma}});
    return dir + "/" + name;
  };
  const torch::Tensor mu = torch::zeros({3}, torch::kDouble), eye = torch::eye(3, torch::kDouble);
  torch::Tensor nan = eye.clone();
  nan[1][1] = NAN;
  torch::Tensor asym = eye.clone();
  asym[0][1] = 0.5;
  const torch::Tensor indefinite = torch::diag(torch::tensor({1.0, -1.0, 2.0}, torch::kDouble));
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {write("nan.npz", mu, nan), {"sigma holds NaN"}},
      {write("nanmu.npz", torch::full({3}, NAN, torch::kDouble), eye), {"mu holds NaN"}},
      {write("asym.npz", mu, asym), {"not symmetric"}},
      {write("indef.npz", mu, indefinite), {"not positive semi-definite", "-1"}},
      {write("dims.npz", torch::zeros({4}, torch::kDouble), eye), {"expected [d] and [d, d]"}},
  };
  for (const auto& [path, parts] : cases) {
    auto all = parts;
    all.push_back(path);
    expect_names(test::error_of([&] { metrics::load_stats(path); }), all);
  }
  EXPECT_NO_THROW(metrics::load_stats(write("good.npz", mu, eye)));
}

// A directory where a weights file is expected is named (not std::bad_alloc).
TEST(FileIntegrity, DirectoryAsWeightsFileIsNamed) {
  const std::string dir = fresh_path("weights_dir");
  fs::create_directories(dir);
  expect_names(test::error_of([&] { torch_file::load(dir); }), {dir, "is a directory"});
  // A readable fake set, so that the weights are the first thing fid cannot read.
  const std::string fake = fresh_path("weights_dir_fake");
  fs::create_directories(fake);
  for (const char* k : {"0", "1"}) write_png(fake + "/" + k + ".png", torch::full({32, 32, 3}, 255, torch::kUInt8));
  expect_names(fid_error({"--real", "x.npz", "--fake", fake, "--inception", dir}), {dir, "is a directory"});
}

// A checkpoint whose stored config does not match its weights (n_classes 3 -> 99) is refused
// naming the file and the tensor, instead of sampling with mismatched weights.
TEST(FileIntegrity, EditedStoredConfigIsRefusedNamingTheFile) {
  const Config small = parse_config(test::tiny_checkpoint_yaml(), "tiny");
  std::string edited = test::tiny_checkpoint_yaml();
  edited.replace(edited.find("n_classes: 3"), 12, "n_classes: 99");
  Generator g(small.model, small.generator);
  Discriminator d(small.model, small.discriminator);
  torch::optim::Adam og(g->parameters()), od(d->parameters());
  CheckpointWrite w;
  w.iteration = 1;
  w.config_yaml = edited;
  w.g = g.get();
  w.d = d.get();
  w.g_ema = g.get();
  w.opt_g = &og;
  w.opt_d = &od;
  const std::string ck = fresh_path("edited") + "/ckpt_000000001.pt";
  fs::create_directories(fs::path(ck).parent_path());
  save_checkpoint(ck, w);
  const std::string out = fresh_path("edited_out");
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3"}),
               {ck, "part 'g_ema'", "stored config"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3", "--no-ema"}), {ck, "part 'g'"});
}

}  // namespace test_file_integrity
