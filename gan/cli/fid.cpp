// hamgan fid stats (--images DIR | --data SRC [--format F]) --out ref.npz [-n N]
// hamgan fid --real ref.npz|DIR|SRC --fake DIR [--all]
// hamgan fid --real ref.npz|DIR|SRC --checkpoint CK [-n N] [--all]   (samples, no files written)
// hamgan fid --real ref.npz|DIR|SRC --run DIR [-n N]                 (fid.csv + fid.png)
// Inception weights: --inception > $HAMGAN_INCEPTION > eval.inception of the config (-c, or
// the one stored in the checkpoint). --features clf.pt (every form): statistics in that domain
// classifier's features instead (`hamgan classifier train`), plus class accuracy.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <optional>

#include "core/device.h"
#include "core/error.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/cli/commands.h"
#include "gan/eval/reference.h"
#include "gan/eval/score.h"
#include "gan/eval/score_run.h"
#include "gan/sample/plan.h"
#include "gan/sample/sampler.h"
#include "io/decode.h"
#include "metrics/class_accuracy.h"
#include "metrics/classifier.h"
#include "metrics/frechet.h"
#include "metrics/image_dir.h"
#include "metrics/inception.h"
#include "metrics/inception_score.h"
#include "metrics/kid.h"
#include "metrics/statistics.h"

namespace hamgan::cli {

namespace {

void add_common(cxxopts::Options& o) {
  o.add_options()("features", "domain classifier (`hamgan classifier train --out`): FID in its features instead of "
                              "Inception's, plus class accuracy",
                  cxxopts::value<std::string>())(
      "inception", "Inception weights (pytorch-fid .pth, torch-fidelity .pth or NVIDIA TorchScript .pt); "
                               "default $HAMGAN_INCEPTION",
                  cxxopts::value<std::string>())(
      "resize", "torch (pytorch-fid) or tf (torch-fidelity, TF 1.x bilinear)",
      cxxopts::value<std::string>()->default_value("torch"))(
      "batch", "images per Inception batch", cxxopts::value<int64_t>()->default_value("50"))(
      "channels-last", "channels-last memory format for Inception (off by default: no faster here, README)")(
      "n,count", "use the first N images (sorted by path); 0 = all. With --checkpoint/--run: samples to draw "
           "(default eval.fid_n of the config, 10000)", cxxopts::value<int64_t>()->default_value("0"))(
      "c,config", "config whose eval.inception names the weights", cxxopts::value<std::string>())(
      "format", "data source format of --data/--real (fmnist, cifar10, folder, packed; default: detect)",
      cxxopts::value<std::string>())(
      "resolution", "read data sources at this resolution (default: the classifier's, the checkpoint's, else 32)",
      cxxopts::value<int64_t>())(
      "channels", "read data sources with 1 or 3 channels (default: the classifier's, else 1 for fmnist, else 3)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "threads", "CPU threads for LibTorch (default: all cores)", cxxopts::value<int>());
  add_workers_option(o);
  add_device_option(o);
}

// Negative counts are errors, not "use the default" (issue 13).
void check_counts(const cxxopts::ParseResult& r) {
  if (r["n"].as<int64_t>() < 0) fail("-n ", r["n"].as<int64_t>(), ": expected >= 0 (0: all, or the config's eval.fid_n)");
  if (r["batch"].as<int64_t>() < 1) fail("--batch ", r["batch"].as<int64_t>(), ": expected >= 1");
  workers_of(r);  // 1..256
}

// --features, else Inception: --inception > $HAMGAN_INCEPTION > eval.inception of -c (else of
// `stored`, a checkpoint's config).
std::unique_ptr<metrics::FeatureNet> make_net(const cxxopts::ParseResult& r, const Config* stored = nullptr) {
  const torch::Device dev = resolve_device(r["device"].as<std::string>(), "--device");
  if (r.count("features")) {
    if (r.count("inception")) fail("--features and --inception: choose one feature network");
    auto net = std::make_unique<metrics::ClassifierExtractor>(r["features"].as<std::string>(), dev);
    const auto& i = net->info();
    std::cerr << "features: " << r["features"].as<std::string>() << " (" << net->identity() << ", "
              << i.options.n_classes << " classes, " << i.options.resolution << "x" << i.options.resolution << "x"
              << i.options.channels << ")\n";
    return net;
  }
  std::string path;
  std::string cfg_path;
  if (r.count("config")) cfg_path = load_config(r["config"].as<std::string>()).eval.inception;
  else if (stored) cfg_path = stored->eval.inception;
  if (r.count("inception")) path = r["inception"].as<std::string>();
  else if (const char* e = std::getenv("HAMGAN_INCEPTION"); e && *e) path = e;
  else if (!cfg_path.empty()) path = cfg_path;
  else fail("--inception PATH is required (or set HAMGAN_INCEPTION, or eval.inception in the config); "
            "scripts/download_inception.sh fetches pt_inception-2015-12-05-6726825d.pth");
  return std::make_unique<metrics::InceptionExtractor>(path, metrics::parse_resize(r["resize"].as<std::string>()), dev,
                                                       r.count("channels-last") > 0);
}

// With a domain classifier: the class accuracy of labelled features (folder classes, data
// source labels), printed; NaN when there are no labels.
double report_class_accuracy(const metrics::Features& f, const metrics::FeatureNet& net, const std::string& what) {
  if (net.n_classes() == 0) return std::nan("");
  if (!f.labels.defined()) {
    std::cout << "class accuracy: none (" << what << " has no class subdirectories)\n";
    return std::nan("");
  }
  const auto a = metrics::class_accuracy(f.logits, f.labels, what);
  std::cout << "class accuracy " << metrics::format_class_accuracy(a) << "\n";
  return a.overall;
}

metrics::Features features_of(const std::string& dir, const metrics::FeatureNet& net,
                              const cxxopts::ParseResult& r, bool want_logits) {
  const auto files = list_images(dir, r["n"].as<int64_t>());
  const auto t0 = std::chrono::steady_clock::now();
  metrics::Features f = metrics::extract_features(
      net, metrics::image_batches(files, net, r["batch"].as<int64_t>(), static_cast<int>(workers_of(r))), want_logits);
  f.labels = folder_labels(dir, files);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << dir << ": " << files.size() << " images in " << std::fixed << std::setprecision(2) << s << " s ("
            << files.size() / s << " images/s)\n";
  return f;
}

eval::ReferenceOptions reference_options(const cxxopts::ParseResult& r, int64_t n, const Config* cfg,
                                         const metrics::FeatureNet& net) {
  eval::ReferenceOptions o;
  if (r.count("format")) o.format = r["format"].as<std::string>();
  o.n = n;
  const auto* clf = dynamic_cast<const metrics::ClassifierExtractor*>(&net);
  o.resolution = r.count("resolution") ? r["resolution"].as<int64_t>()
                 : clf                 ? clf->info().options.resolution
                 : cfg                 ? cfg->model.resolution
                                       : 32;
  o.channels = r["channels"].as<int64_t>();
  if (o.channels == 0 && clf) o.channels = clf->info().options.channels;
  o.batch = r["batch"].as<int64_t>();
  o.workers = static_cast<int>(workers_of(r));
  return o;
}

void print_score(const eval::Score& s, bool all, const eval::Reference& ref) {
  std::cout << std::setprecision(6) << "FID " << s.fid << "\n";
  if (!all) return;
  if (!std::isnan(s.is)) std::cout << "IS " << s.is << " +- " << s.is_std << "\n";
  if (ref.pool.defined()) std::cout << "KID " << s.kid << " +- " << s.kid_std << "\n";
  else std::cout << ref.no_kid_why << "\n";
}

int stats(int argc, char** argv) {
  cxxopts::Options o("hamgan fid stats", "Reference statistics (pytorch-fid .npz) of an image directory");
  add_common(o);
  o.add_options()("images", "image directory", cxxopts::value<std::string>())(
      "data", "data source (fmnist/cifar10 directory, ImageFolder, packed file)", cxxopts::value<std::string>())(
      "out", "output .npz", cxxopts::value<std::string>());
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  if (r.count("images") + r.count("data") != 1 || !r.count("out"))
    fail("fid stats: one of --images DIR or --data SRC, and --out FILE.npz, are required");
  check_counts(r);
  set_threads(r);
  const auto net = make_net(r);
  const bool domain = net->n_classes() > 0;
  metrics::Features f;
  if (r.count("images")) {
    f = features_of(r["images"].as<std::string>(), *net, r, domain);
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    f = eval::data_features(r["data"].as<std::string>(), reference_options(r, r["n"].as<int64_t>(), nullptr, *net),
                            *net, domain);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << r["data"].as<std::string>() << ": " << f.pool.size(0) << " images in " << std::fixed
              << std::setprecision(2) << s << " s (" << f.pool.size(0) / s << " images/s)\n";
  }
  metrics::GaussianStats st = metrics::compute_stats(f.pool);
  st.net = net->identity();
  metrics::save_stats(r["out"].as<std::string>(), st);
  std::cout << "wrote " << r["out"].as<std::string>() << " (" << f.pool.size(0) << " images, "
            << metrics::describe_feature_net(st.net) << ")\n";
  report_class_accuracy(f, *net, r.count("images") ? r["images"].as<std::string>() : r["data"].as<std::string>());
  return 0;
}

// --checkpoint (one score, printed) or --run (every unscored checkpoint, into fid.csv/fid.png).
int fid_of_samples(const cxxopts::ParseResult& r) {
  const bool run = r.count("run") > 0;
  auto opt = sampler_options(r);
  const int64_t n_flag = r["n"].as<int64_t>();
  if (n_flag < 0 || n_flag > sample::kMaxFidSamples)
    fail("-n ", n_flag, ": expected 2..", sample::kMaxFidSamples, " samples (0: eval.fid_n of the config)");
  if (r["real-n"].as<int64_t>() < 0) fail("--real-n ", r["real-n"].as<int64_t>(), ": expected >= 0");
  if (run && eval::unscored_checkpoints(r["run"].as<std::string>()).empty()) {  // no need for the net
    if (eval::run_checkpoints(r["run"].as<std::string>()).empty())
      fail("--run ", r["run"].as<std::string>(), ": no checkpoints in its checkpoints/ directory");
    if (r.count("features")) eval::check_run_net(r["run"].as<std::string>(), make_net(r)->identity());
    eval::plot_run(r["run"].as<std::string>());
    std::cout << "scored 0 checkpoints; every checkpoint already has a row in " << r["run"].as<std::string>()
              << "/fid.csv\n";
    return 0;
  }
  // The config (Inception weights, resolution, fid_n) of the newest checkpoint that loads.
  std::optional<CheckpointData> loaded;
  if (run) {
    auto cks = eval::run_checkpoints(r["run"].as<std::string>());
    if (cks.empty()) fail("--run ", r["run"].as<std::string>(), ": no checkpoints in its checkpoints/ directory");
    for (auto it = cks.rbegin(); it != cks.rend() && !loaded; ++it) {
      try {
        loaded = load_checkpoint(it->second, opt.device);
      } catch (const Error&) {  // score_run reports each damaged one
      }
    }
    if (!loaded) fail("--run ", r["run"].as<std::string>(), ": no checkpoint in checkpoints/ loads (all damaged)");
  } else {
    loaded = load_checkpoint(r["checkpoint"].as<std::string>(), opt.device);
  }
  const CheckpointData& ck = *loaded;
  const std::string first = ck.path;
  const auto net = make_net(r, &ck.config);
  const int64_t n = n_flag > 0 ? n_flag : ck.config.eval.fid_n;
  if (n < 2) fail("-n ", n, ": expected at least 2 samples for a covariance");
  const auto t0 = std::chrono::steady_clock::now();
  eval::ReferenceOptions real_opt = reference_options(r, r["real-n"].as<int64_t>(), &ck.config, *net);
  if (real_opt.n == 0) real_opt.n = n, real_opt.at_most = true;  // as many real images as samples, or all if fewer
  const eval::Reference ref = eval::load_reference(r["real"].as<std::string>(), real_opt, *net);
  if (ref.pool.defined())
    std::cerr << r["real"].as<std::string>() << ": " << ref.pool.size(0) << " real images in " << std::fixed
              << std::setprecision(2) << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
              << " s\n" << std::defaultfloat;
  const bool quantize = r.count("no-quantize") == 0;
  if (run) {
    eval::RunScoreOptions ro;
    ro.run_dir = r["run"].as<std::string>();
    ro.n = n;
    ro.sampler = opt;
    ro.quantize = quantize;
    std::vector<std::string> damaged;
    const auto rows = eval::score_run(ro, ref, *net, std::cerr, &damaged);
    std::cout << "scored " << rows.size() << " checkpoints; " << ro.run_dir << "/fid.csv, " << ro.run_dir
              << "/fid.png\n";
    if (!damaged.empty()) {
      std::string list;
      for (const auto& d : damaged) list += "\n  " + d;
      fail("fid --run: ", damaged.size(), " damaged checkpoint(s) could not be scored (the others were):", list);
    }
    return 0;
  }
  const sample::Sampler s(ck, opt, std::cerr);
  const eval::Score sc = eval::score_samples(s, n, *net, ref, r.count("all") > 0, quantize);
  std::cerr << first << ": " << sc.n << " samples drawn and through the feature network in " << std::fixed
            << std::setprecision(2) << sc.sample_seconds << " s (" << sc.n / sc.sample_seconds
            << " images/s); scored in " << sc.seconds << " s\n" << std::defaultfloat;
  print_score(sc, r.count("all") > 0, ref);
  if (net->n_classes() > 0) std::cout << "class accuracy " << metrics::format_class_accuracy(sc.class_acc) << "\n";
  return 0;
}

}  // namespace

int fid(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "stats") return stats(argc - 1, argv + 1);
  cxxopts::Options o("hamgan fid", "FID (and IS, KID with --all) of an image directory against reference "
                                   "statistics or another directory; `hamgan fid stats` writes statistics");
  add_common(o);
  o.add_options()("real", "reference .npz (pytorch-fid format) or image directory", cxxopts::value<std::string>())(
      "fake", "image directory to score", cxxopts::value<std::string>())(
      "run", "training run directory: score each checkpoints/ckpt_*.pt not yet in DIR/fid.csv",
      cxxopts::value<std::string>())(
      "real-n", "with --checkpoint/--run: the first N real images of a directory or data source (0: as many as -n, or all if fewer)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "no-quantize", "score samples in float instead of the 8-bit images `hamgan sample` writes")(
      "all", "also Inception Score and KID (KID needs --real to be a directory)");
  add_sample_options(o);
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  if (!r.count("real") || r.count("fake") + r.count("checkpoint") + r.count("run") != 1)
    fail("fid: --real (ref.npz, DIR or data source) and one of --fake DIR, --checkpoint CK or --run DIR are required");
  check_counts(r);
  set_threads(r);
  if (r.count("checkpoint") || r.count("run")) return fid_of_samples(r);
  const bool all = r.count("all") > 0;
  const auto net = make_net(r);
  const bool domain = net->n_classes() > 0;
  const std::string real = r["real"].as<std::string>();
  // The reference first: a broken .npz fails before minutes of feature extraction.
  const eval::Reference ref =
      eval::load_reference(real, reference_options(r, r["n"].as<int64_t>(), nullptr, *net), *net);
  const metrics::Features fake = features_of(r["fake"].as<std::string>(), *net, r, all || domain);
  const metrics::GaussianStats fs = metrics::compute_stats(fake.pool);
  std::cout << std::setprecision(6) << "FID " << metrics::frechet_distance(ref.stats.mu, ref.stats.sigma, fs.mu, fs.sigma) << "\n";
  report_class_accuracy(fake, *net, r["fake"].as<std::string>());
  if (all) {
    if (!domain) {
      const auto is = metrics::inception_score(fake.logits, static_cast<int>(std::min<int64_t>(10, fake.pool.size(0))));
      std::cout << "IS " << is.mean << " +- " << is.std << "\n";
    }
    if (!ref.pool.defined()) std::cout << ref.no_kid_why << "\n";
    else {
      const auto k = metrics::kernel_inception_distance(ref.pool, fake.pool, 100, 1000, 0);
      std::cout << "KID " << k.mean << " +- " << k.std << "\n";
    }
  }
  return 0;
}

}  // namespace hamgan::cli
