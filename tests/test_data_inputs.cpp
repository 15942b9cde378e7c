// Damaged and unusual data (io/decode.h, gan/data/*, gan/eval/reference.h): undecodable images
// are left out of statistics and counted, mostly undecodable training data is an error, CMYK
// JPEGs decode as PIL converts them (tests/oracle/data_inputs.py), huge declared sizes and a gzip
// bomb are refused from their headers, and a loader position that does not fit the data names
// the keys to check.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "gan/config/config.h"
#include "gan/data/dataset.h"
#include "gan/eval/reference.h"
#include "io/decode.h"
#include "io/image.h"
#include "io/png.h"
#include "metrics/feature_net.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/image_folder.h"
#include "support/mean_net.h"
#include "support/oracle.h"

namespace test_data_inputs {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

// An empty directory of this test, created.
std::string fresh(const std::string& name) { return test::created_dir("test_data_inputs", name); }
// A path of this test, emptied, not created.
std::string fresh_path(const std::string& name) { return test::fresh_dir("test_data_inputs", name); }

using test::expect_names;
using test::MeanNet;

std::string image_folder(const std::string& name, int good, int junk) {
  return test::image_folder(fresh(name), good, junk);
}

void write_all(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

// `fid stats --data` over a folder with undecodable images leaves them out (never a black image).
TEST(DataInputs, UndecodableImagesAreLeftOutOfStatisticsAndCounted) {
  const std::string dir = image_folder("undecodable", 3, 2);
  eval::ReferenceOptions o;
  o.format = DataFormat::Folder;
  o.resolution = 32;
  o.channels = 3;
  o.batch = 4;
  o.workers = 1;
  const MeanNet net;
  const metrics::Features f = eval::data_features(dir, o, net, false);
  EXPECT_EQ(f.pool.size(0), 6);
  EXPECT_EQ(f.labels.size(0), 6);
  EXPECT_DOUBLE_EQ(f.pool.min().item<double>(), 1.0);  // no black image among them
}

// A folder of which nearly every image is undecodable is an error, not training on the rest.
TEST(DataInputs, MostlyUndecodableTrainingDataIsAnError) {
  const std::string dir = image_folder("mostly_junk", 2, 30);
  DataConfig dc;
  dc.format = DataFormat::Folder;
  dc.path = dir;
  LoaderOptions lo;
  lo.batch_size = 2;
  lo.workers = 1;
  Loader loader(open_dataset(dc, 32, 3), lo);
  const std::string e = test::error_of([&] {
    for (int i = 0; i < 200; ++i) loader.next();
  });
  EXPECT_NE(e.find("could not be decoded"), std::string::npos) << e;
  // A few bad images among good ones still train.
  dc.path = image_folder("few_junk", 30, 1);
  Loader ok(open_dataset(dc, 32, 3), lo);
  for (int i = 0; i < 60; ++i) ok.next();
}

// CMYK JPEGs (Photoshop's, some of ImageNet's) decode as PIL converts them to RGB. Same
// libjpeg-turbo as PIL here, so the inks are equal and the conversion is integer arithmetic:
// exact, tolerance 0.
TEST(DataInputs, CmykJpegsDecodeAsPilConvertsThem) {
  const torch::Tensor want = test::get(test::load_tensors(test::oracle_path("cmyk.pt")), "rgb");
  Image im;
  std::string why;
  ASSERT_TRUE(decode_image(test::oracle_path("cmyk.jpg"), 0, true, im, why)) << why;
  ASSERT_EQ(im.channels, 3);
  const torch::Tensor got =
      torch::from_blob(im.pixels.data(), {im.height, im.width, 3}, torch::kUInt8).clone();
  EXPECT_TRUE(test::close(got.to(torch::kDouble), want.to(torch::kDouble), 0, 0));
}

// A PNG header declaring 60000 x 60000 pixels: the refusal says the size.
TEST(DataInputs, AHugePngSaysItsSize) {
  const std::string p = fresh("huge_png") + "/huge.png";
  std::vector<unsigned char> b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                  0, 0, 0xEA, 0x60, 0, 0, 0xEA, 0x60, 8, 2, 0, 0, 0, 0, 0, 0, 0};
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  Image im;
  std::string why;
  EXPECT_FALSE(decode_image(p, 0, true, im, why));
  EXPECT_NE(why.find("declares 60000 x 60000 pixels"), std::string::npos) << why;
}

// An image declaring 30000 x 30000 pixels is refused from its header (no 3.7 GB decode).
TEST(DataInputs, HugeDeclaredImageIsRefusedBeforeDecoding) {
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
  const std::string p = fresh_path("huge") + ".png";
  write_all(p, png);
  Image im;
  std::string why;
  EXPECT_FALSE(decode_image(p, 32, false, im, why));
  expect_names(why, {"30000 x 30000", "at most"});
  EXPECT_TRUE(im.pixels.empty());
}

// A gzip bomb named like Fashion-MNIST stops as soon as it outgrows its IDX header.
TEST(DataInputs, GzipBombInFashionMnistStopsAtTheDeclaredSize) {
  const std::string dir = fresh_path("bomb");
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

// Resuming with another data.path or batch size: the loader's stored position does not fit,
// and the error names the data set's size and the keys to check.
TEST(DataInputs, ALoaderPositionThatDoesNotFitNamesTheKeys) {
  DataConfig dc;
  dc.format = DataFormat::Folder;
  dc.path = image_folder("resume_data", 12, 0);  // 24 images: 6 batches of 4 an epoch
  LoaderOptions lo;
  lo.batch_size = 4;
  lo.workers = 1;
  const std::string e = test::error_of([&] { Loader(open_dataset(dc, 32, 3), lo, LoaderState{0, 20}); });
  for (const char* part : {"the checkpoint stopped at batch 20 of epoch 0", "6 batches per epoch", "24 images",
                           "data.path, train.batch_size or the rank count differ", "config.yaml"})
    EXPECT_NE(e.find(part), std::string::npos) << part << ": " << e;
}

}  // namespace test_data_inputs
