// hamgan fid stats (--images DIR | --data SRC [--format F]) --out ref.npz [-n N]
// hamgan fid --real ref.npz|DIR|SRC --fake DIR [--metrics L | --all]
// hamgan fid --real ref.npz|DIR|SRC --checkpoint CK [-n N] [--metrics L | --all]   (samples, no files written)
// hamgan fid --real ref.npz|DIR|SRC --run DIR [-n N]                 (scores.csv + scores.png)
// hamgan fid --real SRC --test-split [-n N] [--metrics L | --all]    (SRC's test images, as samples are scored)
// The flags fill an evaluation request, which build_eval_spec makes the spec (gan/eval/eval_spec.h);
// what each form does: gan/eval/evaluate.h.
#include <utility>

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

// The request of `form` with the settings every form shares; the flag names are the request's
// defaults.
eval::EvalRequest common_request(const cxxopts::ParseResult& r, eval::EvalForm form) {
  eval::EvalRequest q;
  q.form = std::move(form);
  q.features.value = text(r, "features"), q.inception = text(r, "inception"), q.inception_config = text(r, "config");
  q.resize = r["resize"].as<std::string>();
  q.channels_last = r.count("channels-last") > 0;
  q.device = resolve_device(r["device"].as<std::string>(), "--device");
  q.batch.value = r["batch"].as<int64_t>();
  q.n.value = r["n"].as<int64_t>();
  q.format = format_of(r);
  if (r.count("resolution")) q.resolution.value = r["resolution"].as<int64_t>();
  q.channels.value = r["channels"].as<int64_t>();
  q.workers.value = r["workers"].as<int64_t>();
  return q;
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
  const eval::EvalRequest q = common_request(
      *parsed, eval::MakeReference{images.empty() ? From::DataSource : From::ImageDir, images.empty() ? data : images, out});
  set_threads(*parsed);
  eval::evaluate(eval::build_eval_spec(q));
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
      "run", "training run directory: score each checkpoints/ckpt_*.pt not yet in DIR/scores.csv",
      cxxopts::value<std::string>())(
      "test-split", "score the test split of the --real data source (-n of its images) against its training images, "
                    "as --checkpoint scores samples: the figures real images reach in these features")(
      "real-n", "with --checkpoint/--run/--test-split: N real images of a directory or data source, class-balanced "
                "(0: as many as -n, or all if fewer)",
      cxxopts::value<int64_t>()->default_value("0"))(
      "no-quantize", "score samples in float instead of the 8-bit images `hamgan sample` writes")(
      "all", "every metric that the feature network and --real allow (all but cas); a metric named in "
             "--metrics that cannot be computed is an error");
  add_sample_options(o);
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  // The form: exactly one of --fake, --checkpoint, --run, --test-split.
  const std::string fake = text(r, "fake"), checkpoint = text(r, "checkpoint"), run = text(r, "run");
  const bool test_split = r.count("test-split") > 0;
  if (text(r, "real").empty() ||
      int(!fake.empty()) + int(!checkpoint.empty()) + int(!run.empty()) + int(test_split) != 1)
    fail("fid: --real (ref.npz, DIR or data source) and one of --fake DIR, --checkpoint CK, --run DIR or --test-split "
         "are required");
  eval::EvalForm form;
  if (!fake.empty()) form = eval::ScoreFolder{fake};
  else if (!checkpoint.empty()) form = eval::ScoreCheckpoint{checkpoint};
  else if (!run.empty()) form = eval::ScoreRun{run};
  else form = eval::ScoreTestSplit{};
  eval::EvalRequest q = common_request(r, std::move(form));
  q.real.value = text(r, "real");
  q.real_n.value = r["real-n"].as<int64_t>();
  if (r.count("all") && r.count("metrics")) fail("--all and --metrics: give one of them");
  q.metrics.value = r["metrics"].as<std::string>();
  q.all_metrics = r.count("all") > 0;
  q.quantize = r.count("no-quantize") == 0;
  if (fake.empty() && !test_split) q.sampler = sampler_options(r);  // --fake and --test-split draw nothing: its flags unread
  const eval::EvalSpec spec = eval::build_eval_spec(q);
  set_threads(r);
  eval::evaluate(spec);
  return 0;
}

}  // namespace hamgan::cli
