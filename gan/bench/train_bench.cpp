#include "gan/bench/train_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include "core/compat.h"
#include "core/compat_profiler.h"
#include "core/device.h"
#include "core/error.h"
#include "gan/bench/device_profile.h"
#include "gan/bench/op_profile.h"
#include "gan/data/synthetic.h"
#include "gan/models/trace.h"
#include "gan/train/step_cost.h"
#include "gan/train/trainer.h"
#include "io/output_path.h"
#include "io/safetensors_writer.h"

namespace hamgan {

namespace {
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Kineto's trace: a JSON object whose first keys name its schema.
const io::OutputKind& chrome_trace_output() {
  static const io::OutputKind kind{"a Chrome trace", [](std::string_view head) {
                                     return !head.empty() && head[0] == '{' &&
                                            (head.find("\"schemaVersion\"") != std::string_view::npos ||
                                             head.find("\"traceEvents\"") != std::string_view::npos);
                                   }};
  return kind;
}

void synchronize(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}
}  // namespace

PremadeSource::PremadeSource(const Config& cfg, int64_t batch_size, int64_t count, torch::Device device) {
  if (count < 1) fail("premade batches: expected count >= 1, got ", count);
  auto data = std::make_shared<SyntheticDataset>(batch_size * count, cfg.model.resolution, cfg.model.image_channels,
                                                 cfg.model.n_classes, 0);
  DatasetSource source(data, batch_size, 0);
  for (int64_t i = 0; i < count; ++i) {
    Batch b = source.next();
    batches_.push_back({b.images.to(device), b.labels.to(device)});
  }
  synchronize(device);
}

Batch PremadeSource::next() {
  const Batch& b = batches_[next_];
  next_ = (next_ + 1) % batches_.size();
  return b;
}

TrainBenchResult time_train_steps(Trainer& t, BatchSource& source, int64_t iters, int64_t warmup) {
  if (iters < 1) fail("--iters: expected >= 1, got ", iters);
  if (warmup < 0) fail("--warmup: expected >= 0, got ", warmup);
  const Config& cfg = t.config();
  const torch::Device device = t.device();
  for (int64_t i = 0; i < warmup; ++i) t.step(source);
  synchronize(device);
  if (device.is_cuda()) compat::cuda_reset_peak(device.index());
  compat::DeviceTimeline timeline(device);
  std::vector<double> host_ms;
  const auto start = Clock::now();
  timeline.mark();
  for (int64_t i = 0; i < iters; ++i) {
    const auto a = Clock::now();
    t.step(source);
    host_ms.push_back(ms_since(a));
    timeline.mark();
  }
  const std::vector<double> device_ms = timeline.intervals_ms();  // waits for the device
  const double wall = ms_since(start);
  const torch::Tensor s = t.stats().cpu();
  if (!torch::isfinite(s).all().item<bool>()) fail("bench train: the losses became NaN/Inf");

  TrainBenchResult r;
  r.batch = cfg.train.batch_size;
  r.n_dis = cfg.train.n_dis;
  r.iters = iters;
  r.warmup = warmup;
  r.wall_ms = wall / static_cast<double>(iters);
  r.device_median_ms = median(device_ms);
  r.host_median_ms = median(host_ms);
  r.images_per_s = static_cast<double>(r.batch * r.n_dis) * 1000.0 / r.wall_ms;
  // Achieved model FLOP/s against the paper count of `hamgan info` (gan/train/step_cost.h).
  r.tflops = training_step_cost(cfg).total() * static_cast<double>(r.batch) / r.wall_ms * 1e-9;
  if (device.is_cuda()) r.peak_mib = static_cast<double>(compat::cuda_peak_allocated(device.index())) / (1 << 20);
  r.bound = device.is_cuda() ? step_bound(r.host_median_ms, r.device_median_ms, -1).word : "cpu";
  return r;
}

StepBound step_bound(double host_ms, double device_ms, double device_busy) {
  char busy[96] = "";
  if (device_busy >= 0) std::snprintf(busy, sizeof busy, "device busy %.1f%% of a step", 100 * device_busy);
  if (host_ms < kBoundMargin * device_ms) return {"device", "device-bound"};
  if (device_ms < kBoundMargin * host_ms) return {"host", "host-bound (the device waits for the host)"};
  if (device_busy >= kBoundMargin)
    return {"device", std::string("device-bound (") + busy + "; the host blocked on a full launch queue)"};
  if (device_busy >= 0) return {"host", std::string("host-bound (") + busy + ": it waited on the host's launches)"};
  return {"undetermined",
          "host and device agree: the host waited on the device's full launch queue, or the device on the "
          "host; --profile tells which"};
}

double unprofiled_busy(const DeviceProfile& p, int64_t steps, double step_wall_ms) {
  if (p.span_us <= 0 || steps <= 0 || step_wall_ms <= 0) return -1;
  return std::min(1.0, p.busy_us / static_cast<double>(steps) / 1000.0 / step_wall_ms);
}

std::vector<PhaseTime> time_step_phases(Trainer& t, BatchSource& source, int64_t iters) {
  compat::DeviceTimeline timeline(t.device());
  std::vector<std::string> order;  // the phase each mark starts; "" the step's end
  t.set_phase_mark([&](const char* phase) {
    timeline.mark();
    order.emplace_back(phase ? phase : "");
  });
  for (int64_t i = 0; i < iters; ++i) t.step(source);
  t.set_phase_mark(nullptr);
  const std::vector<double> ms = timeline.intervals_ms();
  std::vector<PhaseTime> phases;
  std::map<std::string, size_t> at;
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    if (order[i].empty()) continue;  // from a step's end to the next step's start: the host's loop
    auto [it, fresh] = at.emplace(order[i], phases.size());
    if (fresh) phases.push_back({order[i], 0, 0});
    PhaseTime& p = phases[it->second];
    p.calls += 1;
    p.ms += ms[i];
  }
  for (PhaseTime& p : phases) {
    p.calls /= iters;
    p.ms /= static_cast<double>(iters);
  }
  return phases;
}

namespace {
void print_result(const Config& cfg, const Trainer& t, const TrainBenchResult& r) {
  const torch::Device device = t.device();
  std::printf("bench train: %s, batch %lld%s, n_dis %lld, %s%s, %d threads\n", cfg.source.c_str(),
              static_cast<long long>(r.batch), cfg.train.accumulate > 1 ? " (accumulated)" : "",
              static_cast<long long>(r.n_dis), device.str().c_str(), t.amp() ? " bf16 autocast" : " fp32",
              at::get_num_threads());
  std::printf("iterations %lld (after %lld warm-up, batches made before the clock): %.2f ms/iteration, "
              "%.1f images/s\n",
              static_cast<long long>(r.iters), static_cast<long long>(r.warmup), r.wall_ms, r.images_per_s);
  if (device.is_cuda())
    std::printf("per step: device median %.2f ms, host %.2f ms to enqueue: %s\n", r.device_median_ms,
                r.host_median_ms, step_bound(r.host_median_ms, r.device_median_ms, r.device_busy).verdict.c_str());
  else
    std::printf("per step: median %.2f ms (on the CPU the host runs the device work)\n", r.device_median_ms);
  std::printf("model FLOPs %.3g per iteration: %.3g TFLOP/s\n",
              training_step_cost(cfg).total() * static_cast<double>(r.batch), r.tflops);
  if (r.peak_mib >= 0) std::printf("peak CUDA memory allocated: %.0f MiB\n", r.peak_mib);
}

// The figures of print_result, and the parameter counts of G and D (as bench_torch_eager.py's
// params_g/params_d, for scripts/speed_table.py to see that both time the same model).
std::string result_json(const Config& cfg, Trainer& t, const TrainBenchResult& r,
                        const std::vector<PhaseTime>& phases) {
  std::ostringstream o;
  o.precision(6);
  o << "{\"config\": " << io::json_string(cfg.source) << ", \"device\": " << io::json_string(t.device().str())
    << ", \"amp\": " << (t.amp() ? "true" : "false") << ", \"threads\": " << at::get_num_threads()
    << ", \"batch\": " << r.batch << ", \"n_dis\": " << r.n_dis << ", \"iters\": " << r.iters
    << ", \"warmup\": " << r.warmup << ", \"ms_per_iteration\": " << r.wall_ms
    << ", \"device_median_ms\": " << r.device_median_ms << ", \"host_median_ms\": " << r.host_median_ms
    << ", \"images_per_s\": " << r.images_per_s << ", \"tflops\": " << r.tflops
    << ", \"params_g\": " << count_params(*t.g()) << ", \"params_d\": " << count_params(*t.d()) << ", \"peak_mib\": ";
  if (r.peak_mib >= 0)
    o << r.peak_mib;
  else
    o << "null";
  o << ", \"device_busy\": ";
  if (r.device_busy >= 0)
    o << r.device_busy;
  else
    o << "null";
  o << ", \"bound\": " << io::json_string(r.bound) << ", \"phases\": [";
  for (size_t i = 0; i < phases.size(); ++i)
    o << (i ? ", " : "") << "{\"phase\": " << io::json_string(phases[i].phase) << ", \"calls\": " << phases[i].calls
      << ", \"ms\": " << phases[i].ms << "}";
  o << "]}\n";
  return o.str();
}
}  // namespace

void run_train_bench(const Config& cfg, const TrainBenchOptions& o) {
  if (!o.trace.empty() && !o.profile) fail("--trace: writes the --profile's Chrome trace; add --profile");
  if (!o.trace.empty() && o.json) fail("--trace: comes with --profile's tables, which --json leaves out");
  if (!o.trace.empty()) io::check_output_path(o.trace, chrome_trace_output(), "--trace");
  if (!o.trace.empty() && !compat::writes_traces())
    fail("--trace ", o.trace, ": this LibTorch (", compat::libtorch_description(), ") was built without Kineto and "
         "writes no trace; drop --trace (--profile's tables need none), or build with LIBTORCH=pip");
  const torch::Device device = resolve_device(word_of(cfg.train.device, kDeviceWords));
  Trainer t(cfg, device);
  // Distinct batches, so no step sees the last one's data; at most a few, to keep memory low.
  PremadeSource source(cfg, t.micro_batch(), std::min<int64_t>(4, cfg.train.n_dis * cfg.train.accumulate + 1), device);
  TrainBenchResult r = time_train_steps(t, source, o.iters, o.warmup);
  std::vector<PhaseTime> phases;
  if (o.profile) phases = time_step_phases(t, source, o.iters);
  // Apart from the timed iterations: the marks and the profiler cost time of their own.
  std::optional<DeviceProfile> kernels;
  if (o.profile && device.is_cuda()) {
    compat::kineto_start(/*cuda=*/true);
    for (int64_t i = 0; i < o.iters; ++i) t.step(source);
    synchronize(device);
    kernels = device_profile_of(compat::kineto_stop(o.trace));
    // When host and device agree, the device's busy share says which of them waited.
    r.device_busy = unprofiled_busy(*kernels, o.iters, r.wall_ms);
    r.bound = step_bound(r.host_median_ms, r.device_median_ms, r.device_busy).word;
  }
  if (o.json) {  // the phases ride in the object; the operator tables are for people
    std::fputs(result_json(cfg, t, r, phases).c_str(), stdout);
    return;
  }
  print_result(cfg, t, r);
  if (!o.profile) return;
  {
    double sum = 0;
    for (const auto& p : phases) sum += p.ms;
    std::printf("\ndevice time per phase of the step (%lld more steps, marked):\n", static_cast<long long>(o.iters));
    for (const auto& p : phases)
      std::printf("  %-28s %9.3f ms %6.1f%%%s\n", p.phase.c_str(), p.ms, sum > 0 ? 100 * p.ms / sum : 0.0,
                  p.calls > 1 ? (" (" + std::to_string(p.calls) + " per step)").c_str() : "");
    std::printf("  %-28s %9.3f ms\n", "all phases", sum);
  }
  if (kernels) {
    std::printf("\nKineto profile of %lld more steps:\n", static_cast<long long>(o.iters));
    print_device_profile(*kernels, o.iters, 30);
  } else {
    OpProfile p;
    const auto a = Clock::now();
    for (int64_t i = 0; i < o.iters; ++i) t.step(source);
    const double wall_us = ms_since(a) * 1000;
    std::printf("\nprofile of %lld more iterations (%.2f ms/iteration with the profiler on):\n",
                static_cast<long long>(o.iters), wall_us / 1000 / static_cast<double>(o.iters));
    print_op_table(p.stop(), wall_us, 30);
    if (!o.trace.empty()) {
      compat::kineto_start(/*cuda=*/false);
      t.step(source);
      compat::kineto_stop(o.trace);
    }
  }
  if (!o.trace.empty()) std::printf("Chrome trace: %s\n", o.trace.c_str());
}

}  // namespace hamgan
