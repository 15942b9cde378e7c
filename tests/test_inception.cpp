// The FID Inception against torchvision's Inception3 with pytorch-fid's blocks (oracle in
// float64), loaded from legacy, zip-dict, zip-OrderedDict and TorchScript files; bad files.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "io/torch_file.h"
#include "metrics/inception.h"
#include "support/errors.h"
#include "support/oracle.h"

namespace test_inception {

using namespace hamgan;
using namespace hamgan::test;
using metrics::InceptionExtractor;
using metrics::Resize;

namespace {
constexpr double kRtol = 1e-4, kAtol = 1e-5;  // fp32 network vs float64 reference

std::string error_of(const std::string& path) {
  return test::error_of([&] { InceptionExtractor e(path, Resize::Torch, torch::kCPU); });
}
}  // namespace

TEST(Inception, MatchesTorchvisionOracleInEveryFormat) {
  const TensorMap d = load_tensors(oracle_path("expected.pt"));
  for (const char* f : {"legacy.pth", "zip_dict.pth", "zip_odict.pth"})
    for (const char* mode : {"torch", "tf"}) {
      const InceptionExtractor net(oracle_path(f), metrics::parse_resize(mode), torch::kCPU);
      for (const char* img : {"rgb", "gray"}) {
        const std::string p = std::string(img) + "." + mode;
        const metrics::InceptionOutput o = net.run(get(d, img), true);
        EXPECT_TRUE(close(o.pool, get(d, p + ".pool").to(torch::kFloat), kRtol, kAtol)) << f << " " << p;
        EXPECT_TRUE(close(o.logits, get(d, p + ".logits").to(torch::kFloat), kRtol, kAtol)) << f << " " << p;
        EXPECT_TRUE(close(o.logits_unbiased, get(d, p + ".logits_unbiased").to(torch::kFloat), kRtol, kAtol))
            << f << " " << p;
      }
    }
}

TEST(Inception, ChannelsLastGivesTheSameFeatures) {
  const TensorMap d = load_tensors(oracle_path("expected.pt"));
  const InceptionExtractor net(oracle_path("zip_dict.pth"), Resize::Torch, torch::kCPU, false);
  EXPECT_TRUE(close(net.run(get(d, "rgb"), false).pool, get(d, "rgb.torch.pool").to(torch::kFloat), kRtol, kAtol));
}

TEST(Inception, TorchScriptPath) {
  const TensorMap d = load_tensors(oracle_path("expected.pt"));
  const InceptionExtractor net(oracle_path("inception_jit.pt"), Resize::Torch, torch::kCPU);
  EXPECT_FALSE(net.has_logits());
  EXPECT_TRUE(close(net.run(get(d, "rgb"), false).pool, get(d, "rgb.jit.pool").to(torch::kFloat), kRtol, kAtol));
  EXPECT_THROW(net.run(get(d, "rgb"), true), Error);
}

TEST(Inception, BadWeightFilesAreClearErrors) {
  std::string e = error_of(oracle_path("wrong_shape.pth"));
  EXPECT_NE(e.find("key 'fc.weight': expected shape [1008, 2048], got [1000, 2048]"), std::string::npos) << e;
  EXPECT_NE(e.find("wrong_shape.pth"), std::string::npos) << e;
  e = error_of(oracle_path("missing_key.pth"));
  EXPECT_NE(e.find("missing key 'Mixed_6c.branch7x7_2.conv.weight'"), std::string::npos) << e;
  std::vector<uint8_t> b = torch_file::read_file(oracle_path("legacy.pth"));
  b.resize(b.size() / 2);
  const std::string cut = oracle_path("truncated.pth");
  std::ofstream(cut, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  e = error_of(cut);
  EXPECT_NE(e.find(cut + ": truncated: storage '"), std::string::npos) << e;
  e = error_of(oracle_path("does_not_exist.pth"));
  EXPECT_NE(e.find("cannot open"), std::string::npos) << e;
}

}  // namespace test_inception
