// Frechet distance against scipy.linalg.sqrtm, float64 statistics against np.cov, and .npz
// files exchanged with numpy in both directions.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/error.h"
#include "io/npz.h"
#include "io/torch_file.h"
#include "metrics/frechet.h"
#include "metrics/statistics.h"
#include "support/oracle.h"

namespace test_frechet {

using namespace hamgan;
using namespace hamgan::test;

namespace {
constexpr double kRtol = 1e-6;  // spec: FID matches scipy to 1e-6 relative
}

TEST(Frechet, MatchesScipySqrtm) {
  const TensorMap d = load_tensors(oracle_path("frechet.pt"));
  for (const char* c : {"full", "rankdef"}) {
    const std::string p(c);
    const double want = get(d, p + ".fid").item<double>();
    const double got = metrics::frechet_distance(get(d, p + ".mu1"), get(d, p + ".s1"), get(d, p + ".mu2"),
                                                 get(d, p + ".s2"));
    EXPECT_NEAR(got, want, kRtol * std::abs(want)) << c;
    // symmetric in its arguments
    const double rev = metrics::frechet_distance(get(d, p + ".mu2"), get(d, p + ".s2"), get(d, p + ".mu1"),
                                                 get(d, p + ".s1"));
    EXPECT_NEAR(rev, want, kRtol * std::abs(want)) << c;
  }
}

TEST(Frechet, StatisticsMatchNpCovInBatches) {
  const TensorMap d = load_tensors(oracle_path("frechet.pt"));
  for (const char* c : {"full", "rankdef"}) {
    const std::string p(c);
    const torch::Tensor x = get(d, p + ".feat1");
    metrics::StatsAccumulator acc;
    for (const auto& chunk : x.split(7)) acc.add(chunk);  // uneven batches
    const metrics::GaussianStats s = acc.finish();
    EXPECT_EQ(s.n, x.size(0));
    EXPECT_TRUE(close(s.mu, get(d, p + ".mu1"), 1e-12, 1e-12)) << c;
    EXPECT_TRUE(close(s.sigma, get(d, p + ".s1"), 1e-10, 1e-12)) << c;
  }
}

TEST(Frechet, SetAgainstItselfIsZero) {
  const TensorMap d = load_tensors(oracle_path("frechet.pt"));
  for (const char* c : {"full", "rankdef"}) {
    const std::string p(c);
    const metrics::GaussianStats s = metrics::compute_stats(get(d, p + ".feat1"));
    const double f = metrics::frechet_distance(s.mu, s.sigma, s.mu, s.sigma);
    EXPECT_LT(std::abs(f), 1e-6) << c;
  }
}

TEST(Frechet, RejectsMismatchedShapes) {
  EXPECT_THROW(metrics::frechet_distance(torch::zeros({3}), torch::eye(3), torch::zeros({4}), torch::eye(4)), Error);
  EXPECT_THROW(metrics::frechet_distance(torch::zeros({3}), torch::eye(2), torch::zeros({3}), torch::eye(3)), Error);
}

TEST(Npz, ReadsNumpyStoredAndCompressed) {
  const TensorMap want = load_tensors(oracle_path("npz_expected.pt"));
  for (const char* f : {"stored.npz", "compressed.npz"}) {
    const metrics::GaussianStats s = metrics::load_stats(oracle_path(f));
    EXPECT_TRUE(torch::equal(s.mu, get(want, "mu"))) << f;
    EXPECT_TRUE(torch::equal(s.sigma, get(want, "sigma"))) << f;
  }
  const auto a = npz::read(oracle_path("f32_fortran.npz"));
  EXPECT_TRUE(torch::equal(a.at("sigma"), get(want, "raw")));  // Fortran order transposed back
  EXPECT_TRUE(torch::equal(a.at("mu"), get(want, "mu").to(torch::kFloat).to(torch::kDouble)));
}

TEST(Npz, MissingKeyAndCorruptionAreClearErrors) {
  const std::string f = oracle_path("nosigma.npz");
  try {
    metrics::load_stats(f);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(f + ": no array 'sigma'"), std::string::npos) << e.what();
  }
  std::vector<uint8_t> b = torch_file::read_file(oracle_path("compressed.npz"));
  b[70] ^= 0x55;  // inside the first member's deflate data
  EXPECT_THROW(npz::read_bytes(b, "flip.npz"), Error);
  b.resize(b.size() / 2);
  EXPECT_THROW(npz::read_bytes(b, "cut.npz"), Error);
}

TEST(Npz, NumpyReadsWhatWeWrite) {
  const metrics::GaussianStats s = metrics::load_stats(oracle_path("stored.npz"));
  const std::string out = oracle_path("written_by_cpp.npz");
  metrics::save_stats(out, s);
  const metrics::GaussianStats back = metrics::load_stats(out);
  EXPECT_TRUE(torch::equal(back.sigma, s.sigma));
  const std::string cmd = "/usr/bin/python3 " + source_path("tests/oracle/npz_check.py") + " " + out + " " +
                          oracle_path("stored.npz");
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace test_frechet
