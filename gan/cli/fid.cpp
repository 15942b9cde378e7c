// hamgan fid stats --images DIR --out ref.npz [--n N]
// hamgan fid --real ref.npz|DIR --fake DIR [--all]
// (Sampling a checkpoint plugs into metrics::extract_features as another BatchSource.)
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>

#include "core/error.h"
#include "gan/cli/commands.h"
#include "metrics/frechet.h"
#include "metrics/image_dir.h"
#include "metrics/inception_score.h"
#include "metrics/kid.h"
#include "metrics/statistics.h"

namespace hamgan::cli {

namespace {

void add_common(cxxopts::Options& o) {
  o.add_options()("inception", "Inception weights (pytorch-fid .pth, torch-fidelity .pth or NVIDIA TorchScript .pt); "
                               "default $HAMGAN_INCEPTION",
                  cxxopts::value<std::string>())(
      "resize", "torch (pytorch-fid) or tf (torch-fidelity, TF 1.x bilinear)",
      cxxopts::value<std::string>()->default_value("torch"))(
      "batch", "images per Inception batch", cxxopts::value<int64_t>()->default_value("50"))(
      "workers", "image decoding threads", cxxopts::value<int>()->default_value("4"))(
      "device", "cpu or cuda", cxxopts::value<std::string>()->default_value("cpu"))(
      "channels-last", "channels-last memory format", cxxopts::value<bool>()->default_value("true"))(
      "n", "use the first N images (sorted by path); 0 = all", cxxopts::value<int64_t>()->default_value("0"))(
      "threads", "CPU threads for LibTorch (default: all cores)", cxxopts::value<int>())("h,help", "help");
}

metrics::InceptionExtractor make_net(const cxxopts::ParseResult& r) {
  std::string path;
  if (r.count("inception")) path = r["inception"].as<std::string>();
  else if (const char* e = std::getenv("HAMGAN_INCEPTION")) path = e;
  else fail("--inception PATH is required (or set HAMGAN_INCEPTION); scripts/download_inception.sh fetches "
            "pt_inception-2015-12-05-6726825d.pth");
  const torch::Device dev(r["device"].as<std::string>());
  return metrics::InceptionExtractor(path, metrics::parse_resize(r["resize"].as<std::string>()), dev,
                                     r["channels-last"].as<bool>());
}

metrics::Features features_of(const std::string& dir, const metrics::InceptionExtractor& net,
                              const cxxopts::ParseResult& r, bool want_logits) {
  const auto files = metrics::list_images(dir, r["n"].as<int64_t>());
  const auto t0 = std::chrono::steady_clock::now();
  metrics::Features f = metrics::extract_features(
      net, metrics::image_batches(files, net, r["batch"].as<int64_t>(), r["workers"].as<int>()), want_logits);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << dir << ": " << files.size() << " images in " << std::fixed << std::setprecision(2) << s << " s ("
            << files.size() / s << " images/s)\n";
  return f;
}

int stats(int argc, char** argv) {
  cxxopts::Options o("hamgan fid stats", "Reference statistics (pytorch-fid .npz) of an image directory");
  add_common(o);
  o.add_options()("images", "image directory", cxxopts::value<std::string>())(
      "out", "output .npz", cxxopts::value<std::string>());
  const auto r = o.parse(argc, argv);
  if (r.count("help")) {
    std::cout << o.help() << "\n";
    return 0;
  }
  if (!r.count("images") || !r.count("out")) fail("fid stats: --images DIR and --out FILE.npz are required");
  set_threads(r);
  const auto net = make_net(r);
  const auto f = features_of(r["images"].as<std::string>(), net, r, false);
  metrics::save_stats(r["out"].as<std::string>(), metrics::compute_stats(f.pool));
  std::cout << "wrote " << r["out"].as<std::string>() << " (" << f.pool.size(0) << " images)\n";
  return 0;
}

// cxxopts takes one-letter names as short options; accept the documented `--n N` too.
void long_n(int argc, char** argv) {
  static char short_n[] = "-n";
  for (int k = 1; k < argc; ++k)
    if (std::string(argv[k]) == "--n") argv[k] = short_n;
}

}  // namespace

int fid(int argc, char** argv) {
  long_n(argc, argv);
  if (argc > 1 && std::string(argv[1]) == "stats") return stats(argc - 1, argv + 1);
  cxxopts::Options o("hamgan fid", "FID (and IS, KID with --all) of an image directory against reference "
                                   "statistics or another directory; `hamgan fid stats` writes statistics");
  add_common(o);
  o.add_options()("real", "reference .npz (pytorch-fid format) or image directory", cxxopts::value<std::string>())(
      "fake", "image directory to score", cxxopts::value<std::string>())(
      "all", "also Inception Score and KID (KID needs --real to be a directory)");
  const auto r = o.parse(argc, argv);
  if (r.count("help")) {
    std::cout << o.help() << "\n";
    return 0;
  }
  if (!r.count("real") || !r.count("fake")) fail("fid: --real (ref.npz or DIR) and --fake DIR are required");
  set_threads(r);
  const bool all = r.count("all") > 0;
  const auto net = make_net(r);
  const std::string real = r["real"].as<std::string>();
  const bool real_is_npz = real.size() > 4 && real.substr(real.size() - 4) == ".npz";
  const metrics::Features fake = features_of(r["fake"].as<std::string>(), net, r, all);
  metrics::Features real_f;
  metrics::GaussianStats rs;
  if (real_is_npz) rs = metrics::load_stats(real);
  else real_f = features_of(real, net, r, false), rs = metrics::compute_stats(real_f.pool);
  const metrics::GaussianStats fs = metrics::compute_stats(fake.pool);
  std::cout << std::setprecision(6) << "FID " << metrics::frechet_distance(rs.mu, rs.sigma, fs.mu, fs.sigma) << "\n";
  if (all) {
    const auto is = metrics::inception_score(fake.logits_unbiased, 10);
    std::cout << "IS " << is.mean << " +- " << is.std << "\n";
    if (real_is_npz) std::cout << "KID needs image features: pass --real as a directory\n";
    else {
      const auto k = metrics::kernel_inception_distance(real_f.pool, fake.pool, 100, 1000, 0);
      std::cout << "KID " << k.mean << " +- " << k.std << "\n";
    }
  }
  return 0;
}

}  // namespace hamgan::cli
