// The metric registry sweep: every metric of metrics::metric_registry() through every path that
// names metrics, on tiny feature sets: asked by name (--metrics, eval.metrics, the shorthand
// none other), computed by score_features where its needs are met and refused with the flag or key
// named where they are not, its value through a run's scores.csv and back, a panel of scores.png,
// and eval.best_metric. The cases come from the registry itself, so a newly registered metric is
// swept. Values are checked against the maths functions called directly (metrics/*.h).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "gan/config/config.h"
#include "gan/eval/metric_set.h"
#include "gan/eval/score.h"
#include "gan/eval/score_run.h"
#include "gan/eval/score_table.h"
#include "metrics/frechet.h"
#include "metrics/inception_score.h"
#include "metrics/intra_class_fid.h"
#include "metrics/kid.h"
#include "metrics/metric.h"
#include "metrics/prdc.h"
#include "metrics/statistics.h"
#include "support/errors.h"
#include "support/tiny_checkpoint.h"
#include "support/tiny_run.h"

namespace test_metric_registry {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

// A stand-in feature network: Inception-like (n_classes 0: IS logits) or a 3-class classifier.
class StubNet : public metrics::FeatureNet {
 public:
  explicit StubNet(int64_t classes) : classes_(classes) {}
  torch::Tensor prepare(const torch::Tensor& x) const override { return x; }
  metrics::FeatureOutput features(const torch::Tensor& x, bool) const override { return {x, x}; }
  bool has_logits() const override { return true; }
  int64_t n_classes() const override { return classes_; }
  std::string identity() const override { return classes_ ? "stub-classifier" : ""; }
  torch::Device device() const override { return torch::kCPU; }

 private:
  int64_t classes_;
};

constexpr int64_t kN = 60, kDim = 4, kClasses = 3;

metrics::Features fake_features(int64_t logit_dim) {
  torch::manual_seed(1);
  metrics::Features f;
  f.pool = torch::randn({kN, kDim}, torch::kDouble) + 0.3;
  f.logits = torch::randn({kN, logit_dim});
  f.labels = torch::arange(kN, torch::kLong) % kClasses;
  return f;
}

eval::Reference reference(const std::string& net) {
  torch::manual_seed(2);
  eval::Reference r;
  r.pool = torch::randn({kN, kDim}, torch::kDouble);
  r.labels = torch::arange(kN, torch::kLong) % kClasses;
  r.stats = metrics::compute_stats(r.pool);
  r.stats.net = net;
  r.name = "the stub reference";
  return r;
}

// The metric's value from its maths function, called directly.
double direct(const std::string& name, const metrics::Features& f, const eval::Reference& ref) {
  const auto fs = metrics::compute_stats(f.pool);
  if (name == "fid") return metrics::frechet_distance(ref.stats.mu, ref.stats.sigma, fs.mu, fs.sigma);
  if (name == "is") return metrics::inception_score(f.logits, 10).mean;
  if (name == "kid") return metrics::kernel_inception_distance(ref.pool, f.pool, 100, 1000, 0).mean;
  const auto p = metrics::precision_recall_density_coverage(ref.pool, f.pool);
  if (name == "precision") return p.precision;
  if (name == "recall") return p.recall;
  if (name == "density") return p.density;
  if (name == "coverage") return p.coverage;
  if (name == "ifid") return metrics::intra_class_fid(ref.pool, ref.labels, f.pool, f.labels, kClasses).mean;
  if (name == "class_acc")
    return (f.logits.argmax(1) == f.labels).to(torch::kDouble).mean().item<double>();
  if (name == "cas") return 0.625;  // the stub samples classifier's
  ADD_FAILURE() << "metric " << name << " has no direct oracle in this test: add its line";
  return NAN;
}

// Height of a PNG file (IHDR, big-endian at byte 20).
int64_t png_height(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char b[24] = {};
  in.read(reinterpret_cast<char*>(b), 24);
  return (int64_t{b[20]} << 24) | (b[21] << 16) | (b[22] << 8) | b[23];
}

}  // namespace

TEST(MetricRegistry, NamesAreUniqueWordsAndTheTableColumnsAreThePerCheckpointOnes) {
  const auto names = metrics::metric_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names[0], "fid");
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(names[i].find_first_of(", \t"), std::string::npos) << names[i];
    for (size_t k = 0; k < i; ++k) EXPECT_NE(names[i], names[k]);
  }
  std::string header = "iteration,n,seconds,features";
  for (const auto& e : metrics::metric_registry())
    if (e.per_checkpoint) header += "," + e.name;
  EXPECT_EQ(eval::score_table_header(), header);
}

// Every metric, asked by name: computed where its needs are met, equal to its maths function.
TEST(MetricRegistry, EveryMetricScoresAsItsMathsFunction) {
  for (const auto& e : metrics::metric_registry()) {
    SCOPED_TRACE(e.name);
    const bool classifier = e.needs & metrics::kClassifier;
    const StubNet net(classifier ? kClasses : 0);
    const metrics::Features f = fake_features(classifier ? kClasses : 10);
    const eval::Reference ref = reference(net.identity());
    const eval::MetricSet m = eval::parse_metrics(e.name, "--metrics");
    EXPECT_TRUE(m.has(e.name) && m.has("fid"));
    std::function<metrics::MetricValue()> samples;
    if (e.needs & metrics::kSamples) samples = [] { metrics::MetricValue v; v.value = 0.625; return v; };
    const eval::Score s = eval::score_features(f, ref, net, m, samples);
    const double want = direct(e.name, f, ref);
    ASSERT_TRUE(std::isfinite(want));
    EXPECT_NEAR(s.value(e.name), want, 1e-9 * std::max(1.0, std::abs(want)));
    EXPECT_TRUE(e.range.holds(s.value(e.name))) << s.value(e.name) << " outside " << e.range.text();
    std::ostringstream printed;
    eval::print_score(s, printed);
    EXPECT_NE(("\n" + printed.str()).find("\n" + e.name + " "), std::string::npos) << printed.str();
    // Without its needs: refused before anything is read, naming the key that asked.
    eval::MetricScope scope;
    scope.key = "eval.metrics";
    scope.real_key = "eval.real", scope.real = "ref.npz";
    scope.real_is_stats = true;
    scope.network = classifier ? "inception" : "classifier";
    scope.no_samples_why = "no samples here";
    const unsigned blocking = metrics::kRealFeatures | metrics::kInception | metrics::kSamples;
    if (e.needs & blocking) {
      const std::string err = test::error_of([&] { eval::check_metrics_possible(m, scope); });
      EXPECT_NE(err.find("eval.metrics " + e.name), std::string::npos) << err;
      EXPECT_FALSE(eval::possible_metrics(m, scope).has(e.name));
    }
  }
}

// Every table metric: a row through scores.csv and back, a panel of scores.png, best_metric.
TEST(MetricRegistry, EveryTableMetricRoundTripsThroughTheRunTableAndItsPlot) {
  const std::string dir = test::fresh_dir("metric_registry_run");
  fs::create_directories(dir);
  eval::ScoreRow row;
  row.iteration = 10, row.n = kN, row.seconds = 1.5, row.net = "stub-classifier";
  double x = 0.1234567891;  // distinct values, each inside its metric's range
  for (const auto& name : metrics::table_metric_names()) {
    const metrics::ValueRange& range = metrics::metric_entry(name).range;
    x *= 1.7;
    row.values[name] = std::isinf(range.highest) ? std::max(range.lowest, 0.0) + x : x / (1 + x);
  }
  eval::append_run_score(dir, row);
  row.iteration = 20;
  eval::append_run_score(dir, row);
  const auto rows = eval::read_run_scores(dir);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& name : metrics::table_metric_names()) {
    SCOPED_TRACE(name);
    EXPECT_NEAR(rows[1].value(name), row.values[name], 1e-9 * row.values[name]);
    // eval.best_metric accepts it; the config reads it as the registry names it.
    const Config cfg = parse_config(test::tiny_checkpoint_yaml(), "sweep",
                                    {"eval.metrics=" + name, "eval.best_metric=" + name});
    EXPECT_EQ(cfg.eval.best_metric, name);
    EXPECT_TRUE(metrics::parse_metric_list(cfg.eval.metrics).has(name));
  }
  eval::plot_run(dir);
  ASSERT_TRUE(fs::exists(eval::scores_png(dir)));
  const int64_t panels = static_cast<int64_t>(metrics::table_metric_names().size());
  EXPECT_EQ(png_height(eval::scores_png(dir)) % panels, 0);
  EXPECT_GE(png_height(eval::scores_png(dir)), panels * 100);
}

// A value its metric can never take (a negative FID, a precision above 1) ranked as a score,
// the best of its run for a negative FID. Refused when the table is read, naming the file, the
// line and the column; each end of a range itself still reads.
TEST(MetricRegistry, ATableValueOutsideItsMetricsRangeIsRefused) {
  const std::string dir = test::fresh_dir("metric_registry_ranges");
  fs::create_directories(dir);
  const std::string csv = dir + "/scores.csv";
  // Line 2 holds `first`, line 3 `value`, in `column` (fid 40 and 30 beside another metric).
  const auto table = [&](const std::string& column, const std::string& first, const std::string& value) {
    std::ofstream(csv) << "iteration,n,seconds,features,fid" << (column == "fid" ? "" : "," + column) << "\n"
                       << "100,10,1,inception," << (column == "fid" ? first : "40," + first) << "\n"
                       << "200,10,1,inception," << (column == "fid" ? value : "30," + value) << "\n";
  };
  table("fid", "40", "-3.25");
  std::string e = test::error_of([&] { eval::read_score_table(csv); });
  EXPECT_NE(e.find(csv + ":3: column 'fid' is '-3.25'; expected a value in [0, inf)"), std::string::npos) << e;
  int ends = 0;
  for (const auto& name : metrics::table_metric_names()) {
    SCOPED_TRACE(name);
    const metrics::ValueRange& r = metrics::metric_entry(name).range;
    for (const double end : {r.lowest, r.highest}) {
      if (std::isinf(end)) continue;
      ++ends;
      std::ostringstream at, past;
      at << end;
      past << (end == r.lowest ? end - 0.01 : end + 0.01);
      table(name, at.str(), at.str());
      EXPECT_EQ(test::error_of([&] { eval::read_score_table(csv); }), "(no error)");
      table(name, at.str(), past.str());
      e = test::error_of([&] { eval::read_score_table(csv); });
      EXPECT_NE(e.find(csv + ":3: column '" + name + "' is '" + past.str() + "'; expected a value in " + r.text()),
                std::string::npos) << e;
    }
  }
  EXPECT_GE(ends, 12);  // fid, is, density, ifid: from 0 or 1; class_acc, precision, recall, coverage: [0, 1]
  // KID's unbiased estimate is below 0 when the sets match: a value it gives, read as it is.
  table("kid", "0.01", "-0.0004");
  EXPECT_DOUBLE_EQ(eval::read_score_table(csv)[1].value("kid"), -0.0004);
}

// A pre-release build's fid.csv is refused, naming it and the command that scores the run anew,
// and left as it was.
TEST(MetricRegistry, APreReleaseFidCsvIsRefusedNamingItAndLeftAlone) {
  const std::string dir = test::fresh_dir("metric_registry_legacy");
  fs::create_directories(dir);
  const std::string old = "iteration,fid,is,kid,n,seconds,class_acc,features,precision,recall,density,coverage,ifid\n"
                          "10,479.7350045,,121.4031241,100,0.27,0.11,clf-1,0.2,0,0.542,0.08,747.6357532\n";
  { std::ofstream(dir + "/fid.csv") << old; }
  for (const auto& f : std::vector<std::function<void()>>{[&] { eval::read_run_scores(dir); },
                                                          [&] { eval::append_run_score(dir, eval::ScoreRow{}); }}) {
    const std::string e = test::error_of(f);
    EXPECT_NE(e.find(dir + "/fid.csv"), std::string::npos) << e;
    EXPECT_NE(e.find("hamgan fid --run " + dir), std::string::npos) << e;
  }
  EXPECT_FALSE(fs::exists(dir + "/scores.csv"));
  std::ifstream in(dir + "/fid.csv");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), old);
}

TEST(MetricRegistry, ListsAreParsedOnceAndNamedInErrors) {
  EXPECT_EQ(eval::parse_metrics("fid, recall,precision").text(), "fid,precision,recall");
  for (const std::string bad : {"fid,,kid", "kid,kid", "bogus", " ", "fid,", "pr", "dc"}) {
    SCOPED_TRACE(bad);
    const std::string e = test::error_of([&] { eval::parse_metrics(bad, "--metrics"); });
    EXPECT_EQ(e.rfind("--metrics '" + bad + "'", 0), 0u) << e;
  }
  const std::string e = test::error_of(
      [] { parse_config(test::tiny_checkpoint_yaml(), "sweep", {"eval.metrics=fid,bogus"}); });
  EXPECT_NE(e.find("eval.metrics"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown metric 'bogus'"), std::string::npos) << e;
}

}  // namespace test_metric_registry
