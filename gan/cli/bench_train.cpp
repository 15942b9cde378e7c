// `hamgan bench train`: times full training iterations (n_dis D steps + G step + EMA) on
// synthetic data after warm-up; prints the median ms/iteration and images/s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "core/compat.h"
#include "core/error.h"
#include "gan/cli/commands.h"
#include "gan/data/synthetic.h"
#include "gan/train/step_cost.h"
#include "gan/train/trainer.h"

namespace hamgan::cli {

int bench_train(int argc, char** argv) {
  cxxopts::Options opts("hamgan bench train", "Time training iterations on synthetic data");
  add_config_options(opts, "configs/fmnist32_sagan.yaml");
  opts.add_options()("iters", "timed iterations", cxxopts::value<int64_t>()->default_value("20"))(
      "warmup", "untimed iterations first", cxxopts::value<int64_t>()->default_value("3"))(
      "batch", "batch size (default: train.batch_size)", cxxopts::value<int64_t>());
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  set_threads(r);
  Config cfg = config_from(r);
  if (r.count("batch")) {
    cfg.train.batch_size = r["batch"].as<int64_t>();
    if (cfg.train.batch_size < 1) fail("--batch: expected >= 1");
    if (cfg.train.batch_size % cfg.train.accumulate != 0) cfg.train.accumulate = 1;
  }
  const int64_t iters = r["iters"].as<int64_t>(), warmup = r["warmup"].as<int64_t>();
  if (iters < 1) fail("--iters: expected >= 1, got ", iters);

  const torch::Device device = resolve_device(cfg.train.device);
  Trainer t(cfg, device);
  auto data = std::make_shared<SyntheticDataset>(std::max<int64_t>(1024, t.micro_batch()),
                                                 cfg.model.resolution, cfg.model.image_channels,
                                                 cfg.model.n_classes, 0);
  DatasetSource source(data, t.micro_batch(), 0);
  const auto sync = [&]() {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  std::printf("bench train: %s, batch %lld%s, n_dis %lld, %s%s, %d threads\n", cfg.source.c_str(),
              static_cast<long long>(cfg.train.batch_size),
              cfg.train.accumulate > 1 ? " (accumulated)" : "",
              static_cast<long long>(cfg.train.n_dis), device.str().c_str(),
              t.amp() ? " bf16 autocast" : " fp32", at::get_num_threads());
  for (int64_t i = 0; i < warmup; ++i) t.step(source);
  sync();
  if (device.is_cuda()) compat::cuda_reset_peak(device.index());
  std::vector<double> ms;
  for (int64_t i = 0; i < iters; ++i) {
    const auto a = std::chrono::steady_clock::now();
    t.step(source);
    sync();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  const torch::Tensor s = t.stats().cpu();
  if (!torch::isfinite(s).all().item<bool>()) fail("bench train: the losses became NaN/Inf");
  std::sort(ms.begin(), ms.end());
  const double med = ms[ms.size() / 2];
  const double img_s = cfg.train.batch_size * cfg.train.n_dis * 1000.0 / med;
  std::printf("iterations %lld (after %lld warm-up): median %.2f ms/iteration (min %.2f, max %.2f), "
              "%.1f images/s\n",
              static_cast<long long>(iters), static_cast<long long>(warmup), med, ms.front(),
              ms.back(), img_s);
  // Achieved model FLOP/s against the paper count of `hamgan info` (gan/train/step_cost.h).
  const double flops = training_step_cost(cfg).total() * static_cast<double>(cfg.train.batch_size);
  std::printf("model FLOPs %.3g per iteration: %.3g TFLOP/s\n", flops, flops / med * 1e-9);
  if (device.is_cuda())
    std::printf("peak CUDA memory allocated: %.0f MiB\n",
                static_cast<double>(compat::cuda_peak_allocated(device.index())) / (1 << 20));
  return 0;
}

}  // namespace hamgan::cli
