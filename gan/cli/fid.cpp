// hamgan fid stats (--images DIR | --data SRC [--format F]) --out ref.npz [-n N]
// hamgan fid --real ref.npz|DIR|SRC --fake DIR [--metrics L | --all]
// hamgan fid --real ref.npz|DIR|SRC --checkpoint CK [-n N] [--metrics L | --all]   (samples, no files written)
// hamgan fid --real ref.npz|DIR|SRC --run DIR [-n N]                 (scores.csv + scores.png)
// What each form does: gan/eval/fid_job.h.
#include "core/device.h"
#include "gan/cli/commands.h"
#include "gan/eval/fid_job.h"

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
      "resolution", "read data sources at this resolution (default: the classifier's, the checkpoint's, else 32)",
      cxxopts::value<int64_t>())(
      "channels", "read data sources with 1 or 3 channels (default: the classifier's, else 1 for fmnist, else 3)",
      cxxopts::value<int64_t>()->default_value("0"));
  add_threads_option(o);
  add_workers_option(o);
  add_format_option(o, "--data / --real");
  add_device_option(o);
}

// --metrics's help, from the registry: each metric's name and what it is.
std::string metrics_help() {
  std::string h = "comma list of train.eval_metrics's names (fid always):";
  for (const auto& e : metrics::metric_registry()) h += " " + e.name + " (" + e.help + ");";
  std::string real;
  for (const auto& e : metrics::metric_registry())
    if (e.needs & metrics::kRealFeatures) real += (real.empty() ? "" : ", ") + e.name;
  return h + " " + real + " need --real to be images or a data source (not an .npz)";
}

std::string text(const cxxopts::ParseResult& r, const std::string& key) {
  return r.count(key) ? r[key].as<std::string>() : std::string();
}

eval::FidJob common_job(const cxxopts::ParseResult& r) {
  eval::FidJob j;
  j.features = text(r, "features"), j.inception = text(r, "inception"), j.config = text(r, "config");
  j.resize = r["resize"].as<std::string>();
  j.channels_last = r.count("channels-last") > 0;
  j.device = resolve_device(r["device"].as<std::string>(), "--device");
  j.batch = r["batch"].as<int64_t>();
  j.n = r["n"].as<int64_t>();
  j.format = format_of(r);
  if (r.count("resolution")) j.resolution = r["resolution"].as<int64_t>();
  j.channels = r["channels"].as<int64_t>();
  j.workers = static_cast<int>(workers_of(r));
  return j;
}

int stats(int argc, char** argv) {
  cxxopts::Options o("hamgan fid stats", "Reference statistics (pytorch-fid .npz) of an image directory");
  add_common(o);
  o.add_options()("images", "image directory", cxxopts::value<std::string>())(
      "data", "data source (fmnist/cifar10 directory, ImageFolder, packed file)", cxxopts::value<std::string>())(
      "out", "output .npz (may replace an earlier .npz, never another file)", cxxopts::value<std::string>());
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  eval::FidJob j = common_job(*parsed);
  j.images = text(*parsed, "images"), j.data = text(*parsed, "data"), j.out = text(*parsed, "out");
  set_threads(*parsed);
  eval::fid_stats(j);
  return 0;
}

}  // namespace

int fid(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "stats") return stats(argc - 1, argv + 1);
  cxxopts::Options o("hamgan fid", "FID and the other metrics of --metrics (scores of generated images) of an image directory against reference "
                                   "statistics or another directory; `hamgan fid stats` writes statistics");
  add_common(o);
  o.add_options()("real", "reference .npz (pytorch-fid format) or image directory", cxxopts::value<std::string>())(
      "fake", "image directory to score: DIR/<class number>/<image> as `hamgan sample` writes it, or flat "
              "(hidden entries skipped)", cxxopts::value<std::string>())(
      "run", "training run directory: score each checkpoints/ckpt_*.pt not yet in DIR/scores.csv (or an earlier DIR/fid.csv)",
      cxxopts::value<std::string>())(
      "real-n", "with --checkpoint/--run: the first N real images of a directory or data source (0: as many as -n, or all if fewer)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "no-quantize", "score samples in float instead of the 8-bit images `hamgan sample` writes")(
      "metrics", metrics_help(),
      cxxopts::value<std::string>()->default_value("fid"))(
      "all", "every metric that the feature network and --real allow (all but cas); a metric named in "
             "--metrics that cannot be computed is an error");
  add_sample_options(o);
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  eval::FidJob j = common_job(r);
  j.real = text(r, "real"), j.fake = text(r, "fake"), j.checkpoint = text(r, "checkpoint"), j.run = text(r, "run");
  j.real_n = r["real-n"].as<int64_t>();
  if (r.count("all") && r.count("metrics")) fail("--all and --metrics: give one of them");
  j.metrics = r.count("all") ? metrics::every_table_metric() : eval::parse_metrics(r["metrics"].as<std::string>(), "--metrics");
  j.all_metrics = r.count("all") > 0;
  j.quantize = r.count("no-quantize") == 0;
  if (!j.checkpoint.empty() || !j.run.empty()) j.sampler = sampler_options(r);
  set_threads(r);
  eval::fid_score(j);
  return 0;
}

}  // namespace hamgan::cli
