// The legacy/zip torch.save reader against files written by Python, the real pytorch-fid
// weight file's head (tests/fixtures), and malformed files.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "io/torch_file.h"
#include "support/errors.h"
#include "support/oracle.h"

namespace test_torch_file {

using namespace hamgan;
using hamgan::test::error_of;
using namespace hamgan::test;

namespace {

void expect_same(const TensorMap& got, const TensorMap& want, const std::string& file) {
  ASSERT_EQ(got.size(), want.size()) << file;
  for (const auto& [k, t] : want) {
    ASSERT_TRUE(got.count(k)) << file << " lacks " << k;
    EXPECT_EQ(got.at(k).scalar_type(), t.scalar_type()) << file << " " << k;
    EXPECT_EQ(got.at(k).sizes(), t.sizes()) << file << " " << k;
    EXPECT_TRUE(torch::equal(got.at(k), t)) << file << " " << k;
  }
}

void write(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

TEST(TorchFile, ReadsPythonFilesInBothFormats) {
  const TensorMap want = load_tensors(oracle_path("expected.pt"));
  for (const char* fmt : {"legacy", "zip"})
    for (const char* kind : {"dict", "odict"}) {
      const std::string f = oracle_path(std::string(fmt) + "_" + kind + ".pt");
      expect_same(torch_file::load(f), want, f);
    }
}

TEST(TorchFile, ReadsModuleStateDictWithMetadata) {
  for (const char* fmt : {"legacy", "zip"}) {
    const std::string f = oracle_path(std::string(fmt) + "_module.pt");
    expect_same(torch_file::load(f), load_tensors(oracle_path(std::string(fmt) + "_module_expected.pt")), f);
  }
}

TEST(TorchFile, RejectsNonTensorValues) {
  for (const char* fmt : {"legacy", "zip"}) {
    const std::string f = oracle_path(std::string(fmt) + "_notensor.pt");
    const std::string e = error_of([&] { torch_file::load(f); });
    EXPECT_NE(e.find("key 'a' holds a int, expected a tensor"), std::string::npos) << e;
    EXPECT_NE(e.find(f), std::string::npos) << e;
  }
}

TEST(TorchFile, TruncatedLegacyFileNamesStorageAndBytes) {
  std::vector<uint8_t> b = torch_file::read_file(oracle_path("legacy_dict.pt"));
  b.resize(b.size() - 10);
  const std::string e = error_of([&] { torch_file::load_bytes(b, "cut.pt"); });
  EXPECT_NE(e.find("cut.pt: truncated: storage '"), std::string::npos) << e;
  EXPECT_NE(e.find("needs"), std::string::npos) << e;
  // cut inside the pickle
  b.resize(300);
  const std::string e2 = error_of([&] { torch_file::load_bytes(b, "cut.pt"); });
  EXPECT_NE(e2.find("cut.pt: pickle truncated at byte"), std::string::npos) << e2;
}

TEST(TorchFile, ZipWithMissingStorageRecordFails) {
  // Rename the storage record "data/0" to "data/Z" in place: same sizes, missing key.
  std::vector<uint8_t> b = torch_file::read_file(oracle_path("zip_dict.pt"));
  const std::string needle = "/data/0";
  int replaced = 0;
  for (size_t k = 0; k + needle.size() <= b.size(); ++k)
    if (std::equal(needle.begin(), needle.end(), b.begin() + k) && (b[k + needle.size()] < '0' || b[k + needle.size()] > '9')) {
      b[k + needle.size() - 1] = 'Z';
      ++replaced;
    }
  ASSERT_GE(replaced, 1);
  const std::string e = error_of([&] { torch_file::load_bytes(b, "missing.pt"); });
  EXPECT_NE(e.find("missing.pt: storage record 'data/0' is missing"), std::string::npos) << e;
}

TEST(TorchFile, GarbageIsNotATorchFile) {
  const std::vector<uint8_t> b = {'h', 'e', 'l', 'l', 'o'};
  const std::string e = error_of([&] { torch_file::load_bytes(b, "x.bin"); });
  EXPECT_NE(e.find("x.bin: "), std::string::npos) << e;
  const std::string path = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/garbage.pt";
  write(path, b);
  EXPECT_NE(error_of([&] { torch_file::load(path); }).find(path), std::string::npos);
}

TEST(TorchFile, RejectsForeignGlobals) {
  // pickle of os.system('x'): the reader must refuse, not execute.
  const std::string p = "\x80\x02" "cos\nsystem\nq\x00X\x01\x00\x00\x00xq\x01\x85R.";
  const std::vector<uint8_t> b(p.begin(), p.end());
  size_t pos = 0;
  const std::string e = error_of([&] { pickle::load(b.data(), b.size(), pos, "evil"); });
  EXPECT_NE(e.find("global 'os.system' is not accepted"), std::string::npos) << e;
}

TEST(TorchFile, PytorchFidHeadListsKeysAndReportsTruncation) {
  const std::string f = source_path("tests/fixtures/pt_inception-2015-12-05-6726825d.head-818371.pth");
  const std::vector<uint8_t> b = torch_file::read_file(f);
  const torch_file::Index idx = torch_file::read_index(b, f);
  EXPECT_EQ(idx.format, torch_file::Index::Legacy);
  ASSERT_EQ(idx.tensors.size(), 566u);
  EXPECT_EQ(idx.storages_begin, 81511u);
  int nbt = 0;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [k, r] : idx.tensors) {
    shapes[k] = r.sizes;
    if (k.find("num_batches_tracked") != std::string::npos) {
      ++nbt;
      EXPECT_EQ(r.dtype, torch::kLong) << k;
    } else {
      EXPECT_EQ(r.dtype, torch::kFloat) << k;
    }
  }
  EXPECT_EQ(nbt, 94);
  EXPECT_EQ(shapes.at("Conv2d_1a_3x3.conv.weight"), (std::vector<int64_t>{32, 3, 3, 3}));
  EXPECT_EQ(shapes.at("Mixed_7c.branch_pool.conv.weight"), (std::vector<int64_t>{192, 2048, 1, 1}));
  EXPECT_EQ(shapes.at("fc.weight"), (std::vector<int64_t>{1008, 2048}));
  EXPECT_EQ(shapes.at("fc.bias"), (std::vector<int64_t>{1008}));
  const std::string e = error_of([&] { torch_file::load_bytes(b, f); });
  std::cout << "truncation error: " << e << "\n";
  EXPECT_NE(e.find(f + ": truncated: storage '"), std::string::npos) << e;
  EXPECT_NE(e.find("found"), std::string::npos) << e;
}

}  // namespace test_torch_file
