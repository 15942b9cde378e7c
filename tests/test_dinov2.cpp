// DINOv2 features (metrics/dinov2.h) against an independent PyTorch DINOv2 written from the
// paper and the official model (tests/oracle/dinov2.py), fed the same random weights in the
// released files' exact layout: dgm-eval's Pillow bicubic input, the features at 224 x 224
// (position embeddings interpolated 37 -> 16), at a non-square grid and at the native 37 x 37
// grid, ViT-g's SwiGLU feed-forward, the FD of two image folders through `hamgan fid`, and
// files of the released layout with a tensor missing, extra or misshapen.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "gan/cli/commands.h"
#include "metrics/dinov2.h"
#include "metrics/feature_nets.h"
#include "metrics/pil_resize.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/oracle.h"

namespace test_dinov2 {

using namespace hamgan;
using namespace hamgan::test;
using metrics::DinoV2Extractor;

namespace {
// fp32 network vs the float64 reference: LayerNorm'ed features of order 1 after 12 blocks.
// fp32's rounding (6e-8) grown through the blocks' sums: 1.2e-6 to 1.8e-6 measured at the worst
// element (224 px, 7 x 9 and 37 x 37 grids); 1e-5 leaves room for another CPU's kernels.
constexpr double kRtol = 1e-5, kAtol = 1e-5;

const DinoV2Extractor& vits14() {
  static const DinoV2Extractor net(oracle_path("vits14.pth"), torch::kCPU);
  return net;
}
}  // namespace

TEST(DinoV2, InputIsPillowBicubicAsDgmEval) {
  const TensorMap d = load_tensors(oracle_path("expected.pt"));
  for (const char* img : {"a", "b", "gray"}) {
    const torch::Tensor x = metrics::dinov2_input(get(d, std::string("img.") + img));
    // Pillow's integer arithmetic reproduced exactly: the same 8-bit values, normalised in float32.
    EXPECT_TRUE(close(x, get(d, std::string("pre.") + img), 0, 1e-6)) << img;
  }
}

TEST(DinoV2, FeaturesMatchTheReferenceAt224) {
  const TensorMap d = load_tensors(oracle_path("expected.pt"));
  EXPECT_EQ(vits14().arch().name, "vits14");
  EXPECT_EQ(vits14().identity().rfind("dinov2_vits14-", 0), 0u) << vits14().identity();
  for (const char* img : {"a", "b", "gray"}) {
    const std::string n = img;
    const torch::Tensor f = vits14().features(get(d, "pre." + n), false).pool;
    EXPECT_EQ(f.scalar_type(), torch::kFloat);
    EXPECT_TRUE(close(f.to(torch::kDouble), get(d, "feat224." + n), kRtol, kAtol)) << n;
    // The whole path from [0, 1] images: prepare, then features.
    const torch::Tensor g = vits14().features(vits14().prepare(get(d, "img." + n)), false).pool;
    EXPECT_TRUE(close(g.to(torch::kDouble), get(d, "feat224." + n), kRtol, kAtol)) << n;
  }
}

TEST(DinoV2, FeaturesMatchTheReferenceOnOtherGrids) {
  const TensorMap d = load_tensors(oracle_path("expected.pt"));
  // 98 x 126: a 7 x 9 grid, interpolated with different scales on each axis.
  EXPECT_TRUE(close(vits14().features(get(d, "raw.y"), false).pool.to(torch::kDouble), get(d, "raw.feat_y"), kRtol,
                    kAtol));
  // 518 x 518: the released 37 x 37 grid, used as it is.
  EXPECT_TRUE(close(vits14().features(get(d, "raw.x"), false).pool.to(torch::kDouble), get(d, "raw.feat518"), kRtol,
                    kAtol));
}

TEST(DinoV2, SwiGluFeedForwardOfVitG) {
  const TensorMap d = load_tensors(oracle_path("expected.pt"));
  const torch::Tensor x = get(d, "swiglu.x");
  const int64_t dim = x.size(-1);
  metrics::DinoV2Block blk(dim, 1, /*swiglu=*/true);
  blk->to(torch::kDouble);  // before loading: the oracle's weights kept in double
  TensorMap sd = state_dict(*blk);
  for (const char* k : {"mlp.w12.weight", "mlp.w12.bias", "mlp.w3.weight", "mlp.w3.bias"}) sd[k] = get(d, std::string("swiglu.") + (k + 4));
  load_state_dict(*blk, sd, "swiglu oracle");
  blk->to(torch::kDouble);
  EXPECT_TRUE(close(blk->feed_forward(x), get(d, "swiglu.out"), 1e-12, 1e-12));
}

TEST(DinoV2, LayoutIsTheReleasedFilesOfEveryArchitecture) {
  for (const auto& a : metrics::dinov2_archs()) {
    std::ifstream in(oracle_path("layout_" + a.name + ".txt"));
    ASSERT_TRUE(in) << a.name;
    std::vector<std::pair<std::string, std::vector<int64_t>>> want;
    for (std::string line; std::getline(in, line);) {
      std::istringstream s(line);
      std::string key, dims;
      s >> key >> dims;
      std::vector<int64_t> shape;
      std::istringstream ds(dims);
      for (std::string v; std::getline(ds, v, ',');) shape.push_back(std::stoll(v));
      want.emplace_back(key, shape);
    }
    EXPECT_EQ(metrics::dinov2_layout(a), want) << a.name;
    // The module's own tensors are that layout, by name and shape (the two smaller ones built:
    // ViT-g/14 alone takes 4.5 GB).
    if (a.name == "vits14" || a.name == "vitb14") {
      const metrics::DinoV2 net(a);
      const TensorMap sd = state_dict(*net);
      EXPECT_EQ(sd.size(), want.size()) << a.name;
      for (const auto& [k, shape] : want) {
        ASSERT_TRUE(sd.count(k)) << a.name << " " << k;
        EXPECT_EQ(sd.at(k).sizes().vec(), shape) << a.name << " " << k;
      }
    }
  }
}

TEST(DinoV2, FilesOfTheLayoutWithABadTensorAreRefusedNamingIt) {
  const auto err = [](const std::string& f) {
    return error_of([&] { metrics::open_feature_net(oracle_path(f), {}, "--features"); });
  };
  std::string e = err("missing_key.pth");
  EXPECT_NE(e.find("blocks.3.attn.qkv.bias"), std::string::npos) << e;
  EXPECT_NE(e.find("missing_key.pth"), std::string::npos) << e;
  e = err("extra_key.pth");
  EXPECT_NE(e.find("blocks.3.attn.extra"), std::string::npos) << e;
  e = err("misshapen.pth");
  EXPECT_NE(e.find("blocks.5.mlp.fc1.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("383"), std::string::npos) << e;
}

// `hamgan fid --real DIR --fake DIR --features vits14.pth`: the Frechet distance in DINOv2
// features, printed as fd_dinov2 (never as fid), equal to the reference pipeline's within 1e-3
// relative (PNG decoding, Pillow's resize, the ViT, the statistics and scipy's sqrtm there).
TEST(DinoV2, FrechetDistanceOfTwoFoldersThroughTheCli) {
  const double want = get(load_tensors(oracle_path("fd.pt")), "fd").item<double>();
  const std::string out = run_cli(cli::fid, "fid",
                                  {"--real", oracle_path("real"), "--fake", oracle_path("fake"), "--features",
                                   oracle_path("vits14.pth"), "--threads", "1"});
  EXPECT_EQ(("\n" + out).find("\nfid "), std::string::npos) << out;
  const size_t at = ("\n" + out).find("\nfd_dinov2 ");
  ASSERT_NE(at, std::string::npos) << out;
  const double got = std::stod(out.substr(at + 10));
  EXPECT_NEAR(got, want, 1e-3 * want) << out;
}

}  // namespace test_dinov2
