// `hamgan bench train`: times full training iterations (n_dis D steps + G step + EMA) as the
// training loop runs them: real batches made before the clock (on the training device), N
// steps enqueued back to back with one synchronisation at the end, the device time of each
// step from marks on the device's queue (core/compat.h DeviceTimeline), and the host's time to
// enqueue a step beside it, which says whether the step is bound by the device or the host
// where the two differ (step_bound). --profile adds the device time per phase of the step and
// per operator and kernel, and on CUDA the device's busy share (gan/bench/device_profile.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gan/bench/device_profile.h"
#include "gan/config/config.h"
#include "gan/train/batch_source.h"

namespace hamgan {

class Trainer;

struct TrainBenchResult {
  int64_t batch = 0, n_dis = 0, iters = 0, warmup = 0;
  double wall_ms = 0;           // the N steps' wall clock / N (one synchronisation, at the end)
  double device_median_ms = 0;  // median device time of one step
  double host_median_ms = 0;    // median host time to enqueue one step (the CPU: to run it)
  double images_per_s = 0;      // batch * n_dis images per wall_ms
  double tflops = 0;            // `hamgan info`'s model FLOPs of a step per wall_ms
  double peak_mib = -1;         // CUDA: peak memory allocated in the timed steps; else -1
  // --profile on CUDA: the device's busy share of an unprofiled step (unprofiled_busy); else -1.
  double device_busy = -1;
  std::string bound;  // step_bound(...).word; "cpu" on the CPU, where host and device are one
};

// Who waits on whom in a CUDA step, from the medians of the host's time to enqueue a step and
// the device's time for it (marks on its queue), and the device's busy fraction where profiled
// (< 0: not). The two times tell only when they differ by more than kBoundMargin: a host that
// enqueues faster than the device runs leaves the device no gap (device-bound); a device that
// finishes sooner waits for the host (host-bound). When they agree, either the host blocked on
// the device's full launch queue (a step of thousands of kernels fills it) or the device idled
// between the host's launches, and only the device's busy fraction separates the two.
inline constexpr double kBoundMargin = 0.9;  // "clearly below": under 90% of the other
struct StepBound {
  std::string word;     // "device", "host", or "undetermined" (agree, not profiled): --json's bound
  std::string verdict;  // the sentence `bench train` prints after the two times
};
StepBound step_bound(double host_ms, double device_ms, double device_busy);

// The device's busy share of an unprofiled step: the profiled steps' kernel, copy and memset time
// (overlaps once) per step over the unprofiled step's wall time, at most 1. Under the profiler the
// host enqueues more slowly, so the profiled timeline's own share (DeviceProfile::busy_fraction)
// shows gaps the unprofiled step does not have; the kernels' own times hardly change. -1 when
// nothing ran.
double unprofiled_busy(const DeviceProfile& p, int64_t steps, double step_wall_ms);

// Real batches made once, before any clock, then handed out in turn: the benchmark times the
// step, not the data (the training loop's loader works ahead of it on other threads).
class PremadeSource : public BatchSource {
 public:
  // `count` batches of `batch_size` from SyntheticDataset, moved to `device`.
  PremadeSource(const Config& cfg, int64_t batch_size, int64_t count, torch::Device device);
  Batch next() override;
  LoaderState state() const override { return {}; }

 private:
  std::vector<Batch> batches_;
  size_t next_ = 0;
};

TrainBenchResult time_train_steps(Trainer& t, BatchSource& source, int64_t iters, int64_t warmup);

struct PhaseTime {
  std::string phase;
  int64_t calls = 0;  // per step
  double ms = 0;      // device time per step
};
// `iters` more steps with the trainer's phase marks: each phase's device time per step, in the
// order the step first runs them.
std::vector<PhaseTime> time_step_phases(Trainer& t, BatchSource& source, int64_t iters);

struct TrainBenchOptions {
  int64_t iters = 20, warmup = 3;
  bool profile = false;  // then phases and operators (and kernels on CUDA)
  std::string trace;     // with profile: the Chrome trace's path ("" none)
  bool json = false;     // one JSON object on stdout instead of the text
};
void run_train_bench(const Config& cfg, const TrainBenchOptions& o);

}  // namespace hamgan
