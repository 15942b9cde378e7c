// `hamgan bench train`: times full training iterations (n_dis D steps + G step + EMA) on
// synthetic data after warm-up; prints the median ms/iteration and images/s (--profile: where
// the time goes, by operator).
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
      "profile", "then profile --iters more iterations: the operators by self time");
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  set_threads(r);
  Config cfg = config_from(r);
  if (r.count("batch")) {
    cfg.train.batch_size = train_batch_of(r, cfg.train.batch_size);
    if (cfg.train.batch_size % cfg.train.accumulate != 0) cfg.train.accumulate = 1;
  }
  run_train_bench(cfg, r["iters"].as<int64_t>(), r["warmup"].as<int64_t>(),
                  r["profile"].as<bool>());
  return 0;
}

}  // namespace hamgan::cli
