// Issue 13: inputs and accidents that used to give a wrong result with exit 0, lose data, hang
// or fail with a message naming nothing. Each case is made here, small: a checkpoint with
// flipped bytes, a full disk (io::inject_write_failure stands in for one), a truncation that
// never ends, a PNG declaring 30000 x 30000, a gzip bomb in Fashion-MNIST's clothes, broken
// FID statistics, huge and negative counts, a checkpoint whose stored config was edited.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "gan/cli/commands.h"
#include "gan/data/dataset.h"
#include "io/decode.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/checkpoint/checkpoint.h"
#include "io/atomic_file.h"
#include "io/zip_reader.h"
#include "io/npz.h"
#include "metrics/statistics.h"
#include "io/torch_file.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/process.h"
#include "support/tiny_checkpoint.h"

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_bad_inputs", name); }

std::string sample_error(std::vector<std::string> args) {
  return test::error_of([&] { test::run_cli(cli::sample_cmd, "sample", args); });
}
std::string fid_error(std::vector<std::string> args) {
  return test::error_of([&] { test::run_cli(cli::fid, "fid", args); });
}

std::string tiny_checkpoint(const std::string& name) {
  const std::string p = fresh(name) + "/ckpt_000000010.pt";
  test::write_tiny_checkpoint(p, 10, true, 1, test::tiny_checkpoint_yaml());
  return p;
}

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(b.data()), b.size());
}

// Expects `msg` to contain every one of `parts`.
void expect_names(const std::string& msg, const std::vector<std::string>& parts) {
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << msg << "' lacks '" << p << "'";
}

}  // namespace

// 13.1: sample and fid refuse a checkpoint whose tensor bytes changed, naming the file.
TEST(BadInputs, FlippedCheckpointIsRefusedBySampleAndFid) {
  const std::string ck = tiny_checkpoint("flip");
  auto b = read_all(ck);
  size_t at = 0;
  io::for_each_zip_member(b, ck, 1 << 20, [&](const std::string& name, const uint8_t* p, size_t n) {
    if (!at && name.find("/data/") != std::string::npos && n >= 16) at = static_cast<size_t>(p - b.data()) + n / 2;
  });
  ASSERT_GT(at, 0u);
  for (size_t k = 0; k < 4; ++k) b[at + k] ^= 0xff;
  write_all(ck, b);
  const std::string out = fresh("flip_out");
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3"}), {ck, "CRC mismatch"});
  EXPECT_FALSE(fs::exists(out));
  expect_names(fid_error({"--real", "x.npz", "--checkpoint", ck, "-n", "3"}), {ck, "CRC mismatch"});
}

// 13.2: a full disk while writing samples, a grid or statistics: an error naming the file, no
// zero-byte or partial file under a final name, no temporary left behind.
TEST(BadInputs, FullDiskIsAnErrorAndLeavesNoPartialFiles) {
  const std::string ck = tiny_checkpoint("disk");
  const std::string out = fresh("disk_out");
  io::inject_write_failure(ENOSPC, 300);  // a few hundred bytes fit: one PNG or so
  const std::string m = sample_error({"--checkpoint", ck, "--out", out, "-n", "12"});
  io::inject_write_failure(0);
  expect_names(m, {out, "No space left on device"});
  for (const auto& f : fs::recursive_directory_iterator(out)) {
    if (!f.is_regular_file()) continue;
    EXPECT_FALSE(io::is_temporary_name(f.path().filename().string())) << f.path();
    EXPECT_GT(fs::file_size(f.path()), 0u) << f.path();
  }
  const std::string grid = fresh("disk_grid") + ".png";
  io::inject_write_failure(ENOSPC, 0);
  expect_names(sample_error({"--checkpoint", ck, "--grid", grid}), {grid, "No space left"});
  io::inject_write_failure(0);
  EXPECT_FALSE(fs::exists(grid));
  // .npz statistics and appended lines the same way.
  const std::string npz = fresh("disk_npz") + ".npz";
  metrics::GaussianStats st{torch::zeros({4}, torch::kDouble), torch::eye(4, torch::kDouble), 2, "", ""};
  io::inject_write_failure(ENOSPC, 10);
  expect_names(test::error_of([&] { metrics::save_stats(npz, st); }), {npz, "No space left"});
  io::inject_write_failure(0);
  EXPECT_FALSE(fs::exists(npz));
  for (const auto& f : fs::directory_iterator(fs::path(npz).parent_path()))
    EXPECT_EQ(f.path().filename().string().rfind(fs::path(npz).filename().string() + ".tmp", 0), std::string::npos)
        << f.path();
  const std::string log = fresh("disk_log") + ".jsonl";
  fs::remove(log);
  io::append_to_file(log, "first line\n");
  io::inject_write_failure(ENOSPC, 5);
  expect_names(test::error_of([&] { io::append_to_file(log, "second line\n"); }), {log, "No space left"});
  io::inject_write_failure(0);
  EXPECT_EQ(fs::file_size(log), 11u);  // the half line was taken back
}

// The helper itself: all or nothing, the old content survives a failed replace.
TEST(BadInputs, AtomicReplaceKeepsTheOldFileOnFailure) {
  const std::string p = fresh("atomic") + ".txt";
  io::write_file_atomically(p, "old content");
  io::inject_write_failure(EIO, 3);
  expect_names(test::error_of([&] { io::write_file_atomically(p, "new content that does not fit"); }),
               {p, "Input/output error"});
  io::inject_write_failure(0);
  EXPECT_EQ(test::read_text(p), "old content");
  EXPECT_FALSE(fs::exists(io::temporary_name(p)));
  io::write_file_atomically(p, "new");
  EXPECT_EQ(test::read_text(p), "new");
}

// 13.4 and 13.6: bounds and signs of the sampling flags, checked before anything is done.
TEST(BadInputs, TruncationAndCountsAreBounded) {
  const std::string ck = tiny_checkpoint("bounds");
  const std::string out = fresh("bounds_out");
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3", "--truncation", "1e-9"}),
               {"--truncation", "1e-09", ">= 0.01"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3", "--truncation", "-1"}),
               {"--truncation", "-1"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "1000000000000"}),
               {"-n", "1000000000000", "at most 10000000"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "--per-class", "4000000000"}),
               {"--per-class", "at most 10000000"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "-3"}), {"-n", "-3", ">= "});
  EXPECT_FALSE(fs::exists(out));
  expect_names(fid_error({"--real", "x.npz", "--fake", out, "-n", "-3"}), {"-n", "-3", ">= 0"});
  expect_names(fid_error({"--real", "x.npz", "--checkpoint", ck, "-n", "-5"}), {"-n", "-5", ">= 0"});
  expect_names(fid_error({"--real", "x.npz", "--checkpoint", ck, "-n", "1000000000000"}),
               {"-n", "1000000"});
  // The smallest accepted truncation ends quickly and keeps |z| <= T.
  EXPECT_EQ(test::run_cli(cli::sample_cmd, "sample",
                          {"--checkpoint", ck, "--out", out, "-n", "3", "--truncation", "0.01"})
                .find("wrote 3 images"),
            0u);
}

// 13.4: an image declaring 30000 x 30000 pixels is refused from its header (no 3.7 GB decode).
TEST(BadInputs, HugeDeclaredImageIsRefusedBeforeDecoding) {
  // A PNG signature, an IHDR chunk (8-bit grayscale, which stb_image would try to decode) and
  // an empty IDAT: all stb_image reads for the size.
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  for (uint32_t v : {30000u, 30000u})
    for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<uint8_t>(v >> s));
  for (uint8_t x : {8, 0, 0, 0, 0}) png.push_back(x);
  const auto put_crc = [&](size_t from) {
    const uLong crc = crc32(0, png.data() + from, static_cast<uInt>(png.size() - from));
    for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<uint8_t>(crc >> s));
  };
  put_crc(12);
  for (uint8_t x : {0, 0, 0, 0}) png.push_back(x);
  const size_t idat = png.size();
  for (char c : std::string("IDAT")) png.push_back(static_cast<uint8_t>(c));
  put_crc(idat);
  const std::string p = fresh("huge") + ".png";
  write_all(p, png);
  Image im;
  std::string why;
  EXPECT_FALSE(decode_image(p, 32, false, im, why));
  expect_names(why, {"30000 x 30000", "at most"});
  EXPECT_TRUE(im.pixels.empty());
}

// 13.4: a gzip bomb named like Fashion-MNIST stops as soon as it outgrows its IDX header.
TEST(BadInputs, GzipBombInFashionMnistStopsAtTheDeclaredSize) {
  const std::string dir = fresh("bomb");
  fs::create_directories(dir);
  const std::string img = dir + "/train-images-idx3-ubyte.gz";
  gzFile f = gzopen(img.c_str(), "wb9");
  const uint8_t header[16] = {0, 0, 8, 3, 0, 0, 0, 10, 0, 0, 0, 28, 0, 0, 0, 28};  // 10 images
  gzwrite(f, header, 16);
  std::vector<uint8_t> zeros(1 << 20, 0);
  for (int i = 0; i < 64; ++i) gzwrite(f, zeros.data(), static_cast<unsigned>(zeros.size()));  // 64 MB
  gzclose(f);
  DataConfig dc;
  dc.format = DataFormat::Fmnist;
  dc.path = dir;
  expect_names(test::error_of([&] { open_dataset(dc, 32, 1); }),
               {img, "more than the 7856 bytes its IDX header declares"});
}

// 13.4: broken FID statistics are refused when read: NaN, not symmetric, not PSD, wrong shapes.
TEST(BadInputs, BrokenFidStatisticsAreRefusedWhenRead) {
  const std::string dir = fresh("npz");
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

// 13.6: a directory where a weights file is expected is named, not std::bad_alloc.
TEST(BadInputs, DirectoryAsWeightsFileIsNamed) {
  const std::string dir = fresh("weights_dir");
  fs::create_directories(dir);
  expect_names(test::error_of([&] { torch_file::load(dir); }), {dir, "is a directory"});
  expect_names(fid_error({"--real", "x.npz", "--fake", dir, "--inception", dir}), {dir, "is a directory"});
}

// 13.6: a checkpoint whose stored config no longer matches its weights (n_classes 3 -> 99)
// is refused naming the file and the tensor, instead of sampling with mismatched weights.
TEST(BadInputs, EditedStoredConfigIsRefusedNamingTheFile) {
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
  const std::string ck = fresh("edited") + "/ckpt_000000001.pt";
  fs::create_directories(fs::path(ck).parent_path());
  save_checkpoint(ck, w);
  const std::string out = fresh("edited_out");
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3"}),
               {ck, "part 'g_ema'", "stored config"});
  expect_names(sample_error({"--checkpoint", ck, "--out", out, "-n", "3", "--no-ema"}), {ck, "part 'g'"});
}
