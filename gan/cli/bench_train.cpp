// `hamgan bench train`: times full training iterations (n_dis D steps + G step + EMA) as the
// training loop runs them, on batches made before the clock; prints ms/iteration, images/s,
// the device and host time of a step (--json: one object for scripts; --profile: the device
// time per phase, operator and, on CUDA, kernel; --trace: Kineto's Chrome trace too).
#include "core/error.h"
#include "gan/bench/train_bench.h"
#include "gan/cli/commands.h"

namespace hamgan::cli {

int bench_train(int argc, char** argv) {
  cxxopts::Options opts("hamgan bench train", "Time training iterations on synthetic data");
  add_config_options(opts, "configs/fmnist32_sagan.yaml");
  add_train_batch_option(opts);
  opts.add_options()("iters", "timed iterations", cxxopts::value<int64_t>()->default_value("20"))(
      "warmup", "untimed iterations first", cxxopts::value<int64_t>()->default_value("3"))(
      "profile", "then --iters more iterations for each of: device time per phase of the step, per "
      "operator (and per kernel on CUDA, with the device's busy share: who bounds a step whose host and "
      "device times agree)")(
      "trace", "with --profile: write the Kineto profiler's Chrome trace to this file",
      cxxopts::value<std::string>())(
      "json", "print one JSON object (with --profile: and the phases, on CUDA device_busy) instead of the text");
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  set_threads(r);
  Config cfg = config_from(r);
  if (r.count("batch")) {  // as train.batch_size, checked as train checks it (mbstd groups, accumulation)
    const int64_t b = train_batch_of(r, cfg.train.batch_size);
    std::vector<std::string> overrides = {"train.batch_size=" + std::to_string(b)};
    if (b % cfg.train.accumulate != 0) overrides.push_back("train.accumulate=1");
    cfg = parse_config(to_yaml(cfg.resolved), cfg.source + " with --batch " + std::to_string(b), overrides);
  }
  TrainBenchOptions o;
  o.iters = r["iters"].as<int64_t>();
  o.warmup = r["warmup"].as<int64_t>();
  o.profile = r["profile"].as<bool>();
  if (r.count("trace")) o.trace = r["trace"].as<std::string>();
  o.json = r["json"].as<bool>();
  run_train_bench(cfg, o);
  return 0;
}

}  // namespace hamgan::cli
