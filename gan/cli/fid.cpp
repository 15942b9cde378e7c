// hamgan fid stats (--images DIR | --data SRC [--format F]) --out ref.npz [-n N]
// hamgan fid --real ref.npz|DIR|SRC --fake DIR [--metrics L | --all]
// hamgan fid --real ref.npz|DIR|SRC --checkpoint CK [-n N] [--metrics L | --all]   (samples, no files written)
// hamgan fid --real ref.npz|DIR|SRC --run DIR [-n N]                 (scores.csv + scores.png)
// The flags become an evaluation spec (gan/eval/eval_spec.h); what each form does: gan/eval/evaluate.h.
#include "core/device.h"
#include "gan/cli/commands.h"
#include "gan/eval/evaluate.h"

namespace hamgan::cli {

namespace {

void add_common(cxxopts::Options& o) {
  add_features_option(o);
  add_batch_option(o);
  add_count_option(o, "the first N (sorted by path), 0: all; with --checkpoint/--run the samples to draw "
                      "(0: eval.fid_n of the config, 10000)", "0");
  add_resolution_option(o);
  add_channels_option(o);
  o.add_options()("inception", "Inception weights (pytorch-fid .pth, torch-fidelity .pth or NVIDIA TorchScript .pt); "
                               "default $HAMGAN_INCEPTION",
                  cxxopts::value<std::string>())(
      "resize", "torch (pytorch-fid) or tf (torch-fidelity, TF 1.x bilinear)",
      cxxopts::value<std::string>()->default_value("torch"))(
      "channels-last", "channels-last memory format for Inception (off by default: no faster here, README)")(
      "c,config", "config whose eval.inception names the weights", cxxopts::value<std::string>());
  add_threads_option(o);
  add_workers_option(o);
  add_format_option(o, "--data / --real");
  add_device_option(o);
}

std::string text(const cxxopts::ParseResult& r, const std::string& key) {
  return r.count(key) ? r[key].as<std::string>() : std::string();
}

// The settings every form shares.
eval::EvalSettings common_settings(const cxxopts::ParseResult& r) {
  eval::EvalSettings j;
  j.features = text(r, "features"), j.inception = text(r, "inception"), j.inception_config = text(r, "config");
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
  add_data_option(o);
  add_out_option(o, "the statistics .npz (may replace an earlier .npz, never another file)");
  o.add_options()("images", "image directory", cxxopts::value<std::string>());
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  const std::string images = text(*parsed, "images"), data = text(*parsed, "data"), out = out_of(*parsed);
  if (images.empty() == data.empty()) fail("fid stats: one of --images DIR or --data SRC is required");
  using From = eval::MakeReference::From;
  const eval::EvalSpec spec{eval::MakeReference{images.empty() ? From::DataSource : From::ImageDir,
                                                images.empty() ? data : images, out},
                            common_settings(*parsed)};
  set_threads(*parsed);
  eval::evaluate(spec);
  return 0;
}

}  // namespace

int fid(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "stats") return stats(argc - 1, argv + 1);
  cxxopts::Options o("hamgan fid", "FID and the other metrics of --metrics (scores of generated images) of an image directory against reference "
                                   "statistics or another directory; `hamgan fid stats` writes statistics");
  add_common(o);
  add_real_option(o);
  add_metrics_option(o);
  o.add_options()("fake", "image directory to score: DIR/<class number>/<image> as `hamgan sample` writes it, or flat "
              "(hidden entries skipped)", cxxopts::value<std::string>())(
      "run", "training run directory: score each checkpoints/ckpt_*.pt not yet in DIR/scores.csv (or an earlier DIR/fid.csv)",
      cxxopts::value<std::string>())(
      "real-n", "with --checkpoint/--run: the first N real images of a directory or data source (0: as many as -n, or all if fewer)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "no-quantize", "score samples in float instead of the 8-bit images `hamgan sample` writes")(
      "all", "every metric that the feature network and --real allow (all but cas); a metric named in "
             "--metrics that cannot be computed is an error");
  add_sample_options(o);
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  // The form: exactly one of --fake, --checkpoint, --run.
  const std::string fake = text(r, "fake"), checkpoint = text(r, "checkpoint"), run = text(r, "run");
  eval::EvalSpec spec;
  if (text(r, "real").empty() || int(!fake.empty()) + int(!checkpoint.empty()) + int(!run.empty()) != 1)
    fail("fid: --real (ref.npz, DIR or data source) and one of --fake DIR, --checkpoint CK or --run DIR are required");
  if (!fake.empty()) spec.form = eval::ScoreFolder{fake};
  else if (!checkpoint.empty()) spec.form = eval::ScoreCheckpoint{checkpoint};
  else spec.form = eval::ScoreRun{run};
  eval::EvalSettings& j = spec.settings;
  j = common_settings(r);
  j.real = text(r, "real");
  j.real_n = r["real-n"].as<int64_t>();
  if (r.count("all") && r.count("metrics")) fail("--all and --metrics: give one of them");
  j.metrics = r.count("all") ? metrics::every_table_metric() : eval::parse_metrics(r["metrics"].as<std::string>(), "--metrics");
  j.all_metrics = r.count("all") > 0;
  j.quantize = r.count("no-quantize") == 0;
  if (fake.empty()) j.sampler = sampler_options(r);
  set_threads(r);
  eval::evaluate(spec);
  return 0;
}

}  // namespace hamgan::cli
