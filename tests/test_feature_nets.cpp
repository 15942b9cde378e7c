// The feature network sweep: every network of metrics::feature_net_registry(), opened from a
// weight file of its kind (recognised from the contents alone), gives [B, dim] float32
// features that are finite, deterministic and the same whatever the batch, and every table
// metric its scope allows is computed in them (values in their ranges; FD named as the
// network's own distance). The cases come from the registry, so a newly registered network is
// swept once its file maker below has a line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "core/error.h"
#include "gan/eval/metric_set.h"
#include "gan/eval/score.h"
#include "metrics/classifier.h"
#include "metrics/feature_nets.h"
#include "metrics/statistics.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/oracle.h"
#include "support/random_classifier.h"

namespace test_feature_nets {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

// Another oracle's output folder (CMake makes this test require those fixtures).
std::string sibling_oracle(const std::string& name, const std::string& file) {
  return (fs::path(test::oracle_path("")).parent_path().parent_path() / name / file).string();
}

std::string classifier_file() {
  return test::write_random_classifier(test::created_dir("feature_nets", "clf") + "/clf.pt", 2, /*channels=*/3);
}

// A weight file for each registered network.
const std::map<std::string, std::function<std::string()>>& file_makers() {
  static const std::map<std::string, std::function<std::string()>> m = {
      {"inception", [] { return sibling_oracle("inception", "zip_dict.pth"); }},
      {"classifier", classifier_file},
      {"dinov2", [] { return sibling_oracle("dinov2", "vits14.pth"); }},
  };
  return m;
}

// Images as files hold them: 8-bit values in [0, 1].
torch::Tensor images(int64_t n, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randint(0, 256, {n, 3, 32, 32}).to(torch::kFloat) / 255;
}

metrics::Features features_of(const metrics::FeatureNet& net, const torch::Tensor& x, bool logits) {
  const metrics::FeatureOutput o = net.features(net.prepare(x), logits);
  metrics::Features f;
  f.pool = o.pool.to(torch::kDouble);
  f.logits = o.logits;
  f.labels = torch::arange(x.size(0), torch::kLong) % 2;
  return f;
}

}  // namespace

TEST(FeatureNets, EveryRegisteredNetwork) {
  for (const auto& e : metrics::feature_net_registry()) {
    SCOPED_TRACE(e.name);
    const auto maker = file_makers().find(e.name);
    ASSERT_NE(maker, file_makers().end()) << "network " << e.name << " has no file maker in this test: add its line";
    const std::string path = maker->second();
    EXPECT_EQ(metrics::feature_net_kind(path, "--features"), e.name);
    const auto net = metrics::open_feature_net(path, {}, "--features");
    EXPECT_TRUE(e.owns(net->identity())) << net->identity();
    EXPECT_EQ(metrics::distance_name(net->identity()), e.distance);

    const torch::Tensor x = images(5, 1);
    const torch::Tensor f = net->features(net->prepare(x), false).pool;
    ASSERT_EQ(f.dim(), 2);
    EXPECT_EQ(f.size(0), 5);
    EXPECT_GT(f.size(1), 1);
    EXPECT_EQ(f.scalar_type(), torch::kFloat);
    EXPECT_TRUE(torch::isfinite(f).all().item<bool>());
    // Deterministic, and batch-size invariant (BLAS may block a batch of 2 differently from 5).
    EXPECT_TRUE(torch::equal(net->features(net->prepare(x), false).pool, f));
    const torch::Tensor parts = torch::cat({net->features(net->prepare(x.slice(0, 0, 2)), false).pool,
                                            net->features(net->prepare(x.slice(0, 2)), false).pool});
    EXPECT_TRUE(test::close(parts, f, 1e-5, 1e-5));

    // Every table metric this network's scope allows, computed in its features.
    eval::MetricScope scope;
    scope.network = e.name;
    const eval::MetricSet m = eval::possible_metrics(metrics::every_table_metric(), scope);
    const bool logits = eval::wants_logits(*net, m);
    const metrics::Features fake = features_of(*net, images(12, 2), logits);
    eval::Reference ref;
    const metrics::Features real = features_of(*net, images(12, 3) * 0.5 + 0.25, false);
    ref.pool = real.pool, ref.labels = real.labels;
    ref.stats = metrics::compute_stats(ref.pool);
    ref.stats.net = net->identity();
    ref.name = "the sweep's reference";
    const eval::Score s = eval::score_features(fake, ref, *net, m);
    EXPECT_EQ(s.distance, e.distance);
    for (const auto& name : m.names) {
      // class_acc is automatic: computed only in a classifier's features (its class logits).
      if ((metrics::metric_entry(name).needs & metrics::kClassifier) && net->n_classes() == 0) continue;
      ASSERT_TRUE(s.values.count(name)) << name;
      const double v = s.value(name);
      EXPECT_TRUE(std::isfinite(v)) << name;
      EXPECT_TRUE(metrics::metric_entry(name).range.holds(v)) << name << " " << v;
    }
    EXPECT_GT(s.value("fid"), 0);
  }
}

TEST(FeatureNets, AFileOfNoKnownNetworkIsRefusedSayingWhatItHolds) {
  // A state dict of another network (a ResNet's keys), and a file that holds no weights at all.
  const std::string foreign = sibling_oracle("dinov2", "foreign.pth");
  std::string e = test::error_of([&] { metrics::open_feature_net(foreign, {}, "eval.features"); });
  EXPECT_NE(e.find("eval.features " + foreign + ": a state dict of 4 tensors (conv1.weight"), std::string::npos) << e;
  EXPECT_NE(e.find("no feature network hamgan knows"), std::string::npos) << e;
  for (const auto& n : metrics::feature_net_names()) EXPECT_NE(e.find("\n  " + n + ": "), std::string::npos) << e;
  const std::string text = test::created_dir("feature_nets", "foreign") + "/other.pth";
  std::ofstream(text) << "not weights";
  e = test::error_of([&] { metrics::open_feature_net(text, {}, "--features"); });
  EXPECT_NE(e.find("--features " + text + ": neither a state dict nor"), std::string::npos) << e;
}

}  // namespace test_feature_nets
