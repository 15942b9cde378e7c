#include "gan/bench/train_bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/compat.h"
#include "core/device.h"
#include "core/error.h"
#include "gan/bench/op_profile.h"
#include "gan/data/synthetic.h"
#include "gan/train/step_cost.h"
#include "gan/train/trainer.h"

namespace hamgan {

void run_train_bench(const Config& cfg, int64_t iters, int64_t warmup, bool profile) {
  if (iters < 1) fail("--iters: expected >= 1, got ", iters);
  const torch::Device device = resolve_device(word_of(cfg.train.device, kDeviceWords));
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
  if (!profile) return;
  // Apart from the timed iterations: the profiler's own cost would inflate them.
  OpProfile p;
  const auto a = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i) t.step(source);
  sync();
  const double wall_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count();
  std::printf("\nprofile of %lld more iterations (%.2f ms/iteration with the profiler on):\n",
              static_cast<long long>(iters), wall_us / 1000 / static_cast<double>(iters));
  print_op_table(p.stop(), wall_us, 30);
}

}  // namespace hamgan
