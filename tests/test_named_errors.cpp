// Errors that name the file or flag at fault and what it is: a domain classifier given as a
// checkpoint (train.init_from), a hamgan checkpoint given as Inception weights
// (HAMGAN_INCEPTION), an .npz of 128-d features without a network name (not "Inception-v3
// pool3"), and a --real-n past the data (not "-n").
#include <gtest/gtest.h>

#include <filesystem>

#include "gan/checkpoint/checkpoint.h"
#include "io/png.h"
#include "metrics/inception.h"
#include "metrics/statistics.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/random_classifier.h"
#include "support/tiny_checkpoint.h"

namespace test_named_errors {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {
std::string fresh(const std::string& name) { return test::fresh_dir("test_named_errors", name); }
}  // namespace

TEST(NamedErrors, AClassifierIsNotACheckpoint) {
  const std::string clf = test::write_random_classifier(fresh("clf") + ".pt", 3);
  test::expect_names(test::error_of([&] { load_checkpoint(clf); }),
                     {clf, "a domain classifier", "not a training checkpoint"});
}

TEST(NamedErrors, ACheckpointIsNotInceptionWeights) {
  const std::string ck = test::tiny_checkpoint_in(fresh("run"));
  test::expect_names(test::error_of([&] { metrics::InceptionExtractor(ck, metrics::Resize::Torch, torch::kCPU, false); }),
                     {ck, "without a forward method", "expected Inception weights"});
}

TEST(NamedErrors, AnUnnamedNpzOf128dIsNotCalledInception) {
  metrics::GaussianStats s;
  s.mu = torch::zeros({128}, torch::kDouble);
  s.sigma = torch::eye(128, torch::kDouble);
  const std::string e = test::error_of([&] { metrics::check_same_net(s, "classifier-128d-abc", "ref.npz"); });
  test::expect_names(e, {"ref.npz", "an unnamed network (128-d", "no feature_net key"});
  EXPECT_EQ(e.find("Inception-v3 pool3 (2048-d)"), std::string::npos) << e;
}

TEST(NamedErrors, RealNPastTheDataIsNamedAsRealN) {
  const std::string real = fresh("real");
  for (int c = 0; c < 3; ++c) {
    fs::create_directories(real + "/" + std::to_string(c));
    for (int k = 0; k < 2; ++k)
      write_png(real + "/" + std::to_string(c) + "/" + std::to_string(k) + ".png",
                torch::full({32, 32, 1}, 30 * c + k, torch::kUInt8));
  }
  const std::string clf = test::write_random_classifier(fresh("clf3") + ".pt", 3);
  const std::string ck = test::tiny_checkpoint_in(fresh("run_n"));
  test::expect_names(test::fid_error({"--checkpoint", ck, "--real", real, "--features", clf, "-n", "3", "--real-n", "50"}),
                     {"--real-n 50", real, "holds only 6 images"});
}

}  // namespace test_named_errors
