// gan/bench: the operator profile of `hamgan bench train --profile` (calls counted per
// operator, nested operators' time moved from the caller's self time to their own); the
// device profile's attribution of kernels to the operators that launched them and the device's
// busy share; the step timing of `bench train` (batches made before the clock, phases of the
// step), its verdict on who bounds the step, its FLOP count and its JSON.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "core/compat_profiler.h"
#include "core/error.h"
#include "core/mac_counter.h"
#include "gan/bench/device_profile.h"
#include "gan/bench/op_profile.h"
#include "gan/bench/train_bench.h"
#include "gan/cli/commands.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/models/trace.h"
#include "gan/train/step_cost.h"
#include "gan/train/trainer.h"
#include "layers/fold_taps.h"
#include "support/cli.h"
#include "support/kernel_scopes.h"
#include "support/tiny_run.h"

namespace test_bench {

using namespace hamgan;
using namespace hamgan::test;

TEST(OpProfile, CountsCallsAndSplitsSelfFromNestedTime) {
  const torch::Tensor a = torch::randn({64, 64}), b = torch::randn({64, 64});
  OpProfile p;
  for (int i = 0; i < 3; ++i) torch::mm(a, b);
  for (int i = 0; i < 2; ++i) torch::relu(a);  // relu calls clamp_min inside
  const std::vector<OpTime> ops = p.stop();
  std::map<std::string, OpTime> by;
  for (const auto& o : ops) {
    EXPECT_GE(o.self_us, 0.0) << o.name;
    EXPECT_LE(o.self_us, o.total_us + 1e-9) << o.name;
    by[o.name] = o;
  }
  ASSERT_TRUE(by.count("aten::mm") && by.count("aten::relu") && by.count("aten::clamp_min"));
  EXPECT_EQ(by["aten::mm"].calls, 3);
  EXPECT_EQ(by["aten::relu"].calls, 2);
  EXPECT_EQ(by["aten::clamp_min"].calls, 2);
  // relu's total = its self time + clamp_min's total (clamp_min is its only child here).
  EXPECT_NEAR(by["aten::relu"].total_us, by["aten::relu"].self_us + by["aten::clamp_min"].total_us, 1e-6);
  for (size_t i = 1; i < ops.size(); ++i) EXPECT_GE(ops[i - 1].self_us, ops[i].self_us);  // sorted
  // Nothing is recorded once stopped: a second profile sees only its own operators.
  torch::mm(a, b);
  OpProfile q;
  torch::relu(a);
  for (const auto& o : q.stop()) EXPECT_NE(o.name, "aten::mm");
}

// Kineto's events as torch.profiler reads them: a kernel's time goes to the host operator whose
// correlation id it links to (the innermost one that launched it), not to that operator's callers.
TEST(DeviceProfile, KernelsCountForTheOperatorThatLaunchedThem) {
  using compat::ProfiledEvent;
  const std::vector<ProfiledEvent> events = {
      {"aten::linear", false, 0, 100, 1, 0},       // calls addmm: launches nothing itself
      {"aten::addmm", false, 10, 80, 2, 0},
      {"aten::relu", false, 100, 20, 3, 0},
      {"aten::addmm", false, 130, 80, 4, 0},
      {"gemm_kernel", true, 20, 40, 0, 2},
      {"gemm_kernel", true, 140, 50, 0, 4},
      {"bias_kernel", true, 60, 5, 0, 2},
      {"relu_kernel", true, 110, 7, 0, 3},
      {"memcpy", true, 200, 3, 0, 99},  // no recorded operator
  };
  const DeviceProfile p = device_profile_of(events);
  EXPECT_DOUBLE_EQ(p.device_us, 40 + 50 + 5 + 7 + 3);
  EXPECT_DOUBLE_EQ(p.unattributed_us, 3);
  ASSERT_EQ(p.operators.size(), 2u);  // linear launched no kernel of its own
  EXPECT_EQ(p.operators[0].name, "aten::addmm");
  EXPECT_EQ(p.operators[0].calls, 2);
  EXPECT_DOUBLE_EQ(p.operators[0].device_us, 40 + 50 + 5);
  EXPECT_EQ(p.operators[1].name, "aten::relu");
  EXPECT_DOUBLE_EQ(p.operators[1].device_us, 7);
  ASSERT_EQ(p.kernels.size(), 4u);
  EXPECT_EQ(p.kernels[0].name, "gemm_kernel");
  EXPECT_EQ(p.kernels[0].calls, 2);
  EXPECT_DOUBLE_EQ(p.kernels[0].device_us, 90);
  for (size_t i = 1; i < p.kernels.size(); ++i) EXPECT_GE(p.kernels[i - 1].device_us, p.kernels[i].device_us);
}

// The device's busy share of its timeline: the union of the kernels' and copies' intervals
// (two streams overlapping count once) over the span from the first start to the last end;
// host operators do not count.
TEST(DeviceProfile, BusyFractionIsTheUnionOfDeviceIntervalsOverTheirSpan) {
  using compat::ProfiledEvent;
  const std::vector<ProfiledEvent> events = {
      {"aten::mm", false, 0, 500, 1, 0},     // host: its time is no device time
      {"gemm_kernel", true, 100, 40, 0, 1},  // [100, 140)
      {"copy_kernel", true, 120, 40, 0, 1},  // [120, 160): overlaps the gemm on another stream
      {"memset", true, 200, 10, 0, 99},      // [200, 210), after a 40 us gap
      {"tail_kernel", true, 230, 20, 0, 1},  // [230, 250), after a 20 us gap
  };
  const DeviceProfile p = device_profile_of(events);
  EXPECT_DOUBLE_EQ(p.span_us, 250 - 100);
  EXPECT_DOUBLE_EQ(p.busy_us, 60 + 10 + 20);
  EXPECT_DOUBLE_EQ(p.busy_fraction(), 90.0 / 150.0);
  EXPECT_DOUBLE_EQ(p.device_us, 40 + 40 + 10 + 20);  // the kernels' summed time, overlaps twice
  EXPECT_EQ(device_profile_of({{"aten::mm", false, 0, 5, 1, 0}}).busy_fraction(), -1);  // nothing ran
}

// The host's waits for the device are the runtime calls that block until queued work is done
// (the fold's blocking constant copy showed as 20 cudaStreamSynchronize per H200 step); a
// launch or an asynchronous copy is none.
TEST(DeviceProfile, CountsTheHostsWaitsForTheDevice) {
  using compat::ProfiledEvent;
  const std::vector<ProfiledEvent> events = {
      {"cudaLaunchKernel", false, 0, 5, 1, 0},       {"cudaMemcpyAsync", false, 10, 3, 2, 0},
      {"cudaStreamSynchronize", false, 20, 300, 3, 0}, {"cudaMemcpy", false, 400, 50, 4, 0},
      {"cudaEventSynchronize", false, 500, 7, 5, 0},  {"gemm_kernel", true, 5, 40, 0, 1},
  };
  const DeviceProfile p = device_profile_of(events);
  EXPECT_EQ(p.host_waits, 3);
  EXPECT_DOUBLE_EQ(p.host_wait_us, 300 + 50 + 7);
  EXPECT_EQ(device_profile_of({{"cudaLaunchKernel", false, 0, 5, 1, 0}}).host_waits, 0);
}

// The busy share the verdict uses is the unprofiled step's: the kernels' busy time per profiled
// step over the unprofiled step time. The H200's HamGAN step: 117.4 ms of kernels per step in a
// 138.1 ms profiled timeline (85%: the profiler slowed the host), 121.5 ms unprofiled (96.6%).
TEST(TrainBench, BusyShareIsOfTheUnprofiledStep) {
  DeviceProfile p;
  p.span_us = 5 * 138068;
  p.busy_us = 5 * 117363;
  EXPECT_NEAR(p.busy_fraction(), 0.850, 5e-4);
  EXPECT_NEAR(unprofiled_busy(p, 5, 121.48), 117.363 / 121.48, 1e-12);
  EXPECT_EQ(step_bound(120.89, 120.94, unprofiled_busy(p, 5, 121.48)).word, "device");
  EXPECT_EQ(unprofiled_busy(p, 5, 100.0), 1.0);  // at most all of it
  EXPECT_EQ(unprofiled_busy(DeviceProfile{}, 5, 100.0), -1);  // nothing ran
}

// Who bounds a CUDA step: the two times decide when one is clearly (under 90% of) the other;
// when they agree only the device's busy share can tell a host blocked on a full launch queue
// (the H200's ImageNet-128 step: host 242.05, device 242.16 ms, the device busy 99.7%) from a
// device idling between the host's launches, and unprofiled the verdict says so.
TEST(TrainBench, StepBoundNeedsTheDeviceBusyWhereHostAndDeviceAgree) {
  EXPECT_EQ(step_bound(50, 100, -1).word, "device");
  EXPECT_EQ(step_bound(89.9, 100, -1).word, "device");
  EXPECT_EQ(step_bound(50, 100, 0.3).word, "device");  // clear times: the busy share is not needed
  EXPECT_EQ(step_bound(100, 50, -1).word, "host");
  EXPECT_EQ(step_bound(100, 89.9, 0.99).word, "host");
  for (const auto& [host, device] : {std::pair{242.05, 242.16}, {91.0, 100.0}, {100.0, 91.0}, {0.0, 0.0}}) {
    const StepBound agree = step_bound(host, device, -1);
    EXPECT_EQ(agree.word, "undetermined") << host << " / " << device;
    EXPECT_NE(agree.verdict.find("--profile tells which"), std::string::npos) << agree.verdict;
  }
  const StepBound queue = step_bound(242.05, 242.16, 0.997);
  EXPECT_EQ(queue.word, "device");
  EXPECT_NE(queue.verdict.find("busy 99.7%"), std::string::npos) << queue.verdict;
  EXPECT_NE(queue.verdict.find("full launch queue"), std::string::npos) << queue.verdict;
  EXPECT_EQ(step_bound(242.05, 242.16, 0.9).word, "device");
  const StepBound idle = step_bound(242.05, 242.16, 0.6);
  EXPECT_EQ(idle.word, "host");
  EXPECT_NE(idle.verdict.find("busy 60.0%"), std::string::npos) << idle.verdict;
}

// `hamgan info`'s FLOPs per image are one count per config: the folded forms', whatever
// train.folded_convs says, though the plain forms run more MACs (else the TFLOP/s of a run
// without the folds would credit it with FLOPs the folded run of the same model skips).
TEST(StepCost, OneCountWhateverTheFoldPolicy) {
  Config cfg = test::tiny();
  std::vector<double> totals;
  for (const FoldPolicy f : {FoldPolicy::WherePays, FoldPolicy::Always, FoldPolicy::Never}) {
    cfg.train.folded_convs = f;
    totals.push_back(training_step_cost(cfg).total());
  }
  EXPECT_EQ(totals[1], totals[0]);
  EXPECT_EQ(totals[2], totals[0]);
  const StepCost c = training_step_cost(cfg);
  const KernelScope never(only_folded(FoldPolicy::Never));
  torch::NoGradGuard no_grad;
  Generator g(cfg.model, cfg.generator);
  int64_t plain = 0;
  {
    MacCounter mc;
    g->forward(torch::zeros({1, g->z_dim()}), torch::zeros({1}, torch::kLong));
    plain = mc.macs();
  }
  EXPECT_GT(2.0 * static_cast<double>(plain), c.g_forward);
}

// Batches are made once, before any clock, and handed out in turn on the training device.
TEST(TrainBench, PremadeBatchesCycleAndKeepTheirShape) {
  const Config cfg = test::tiny();
  PremadeSource source(cfg, 3, 2, torch::kCPU);
  const Batch a = source.next(), b = source.next(), c = source.next();
  EXPECT_EQ(a.images.sizes(), (std::vector<int64_t>{3, cfg.model.image_channels, cfg.model.resolution, cfg.model.resolution}));
  EXPECT_EQ(a.labels.sizes(), (std::vector<int64_t>{3}));
  EXPECT_FALSE(torch::equal(a.images, b.images));
  EXPECT_TRUE(torch::equal(a.images, c.images));
  EXPECT_GE(a.images.min().item<float>(), -1.0f);
  EXPECT_LE(a.images.max().item<float>(), 1.0f);
}

// The figures agree with one another: images/s is the batch per wall time, the wall time per
// step is the mean of the steps' device intervals (on the CPU the host runs the device work,
// so they cover the same time), and the step's phases are listed in the order it runs them,
// D's per D step, within the step's time.
TEST(TrainBench, StepTimesAndPhasesAgree) {
  const Config cfg = test::tiny();
  Trainer t(cfg, torch::kCPU);
  PremadeSource source(cfg, t.micro_batch(), 3, torch::kCPU);
  const TrainBenchResult r = time_train_steps(t, source, 4, 1);
  EXPECT_EQ(r.iters, 4);
  EXPECT_EQ(r.bound, "cpu");
  EXPECT_GT(r.wall_ms, 0);
  EXPECT_NEAR(r.images_per_s, static_cast<double>(r.batch * r.n_dis) * 1000 / r.wall_ms, 1e-9 * r.images_per_s);
  EXPECT_GE(r.wall_ms * 1.0001, r.device_median_ms * 0.5);  // a median can sit below the mean, not far
  EXPECT_EQ(r.peak_mib, -1);
  EXPECT_EQ(t.iteration(), 5);

  const std::vector<PhaseTime> phases = time_step_phases(t, source, 2);
  std::vector<std::string> names;
  for (const auto& p : phases) names.push_back(p.phase);
  const std::vector<std::string> expected = {"real batch and latents", "G forward (D step)", "D forward (D step)",
                                             "D backward (D step)", "D optimizer", "G forward (G step)",
                                             "D forward (G step)", "D and G backward (G step)", "G optimizer", "EMA"};
  EXPECT_EQ(names, expected);
  const int64_t micro = cfg.train.n_dis * cfg.train.accumulate;
  for (const auto& p : phases) {
    EXPECT_GE(p.ms, 0) << p.phase;
    const int64_t calls = p.phase == "D optimizer" ? cfg.train.n_dis
                          : p.phase == "G optimizer" || p.phase == "EMA" ? 1
                          : p.phase.find("(G step)") != std::string::npos ? cfg.train.accumulate
                                                                          : micro;
    EXPECT_EQ(p.calls, calls) << p.phase;
  }
  EXPECT_EQ(t.iteration(), 7);
}

// `bench train --json`: one JSON object that Python's own parser reads, with the figures a
// script needs (scripts read it instead of the text), among them the parameters of G and D as
// a freshly built model of the config has them (what `hamgan info` counts).
TEST(TrainBench, JsonIsOneObjectPythonReads) {
  const std::string dir = test::created_dir("bench", "json");
  const std::string cfg = std::string(std::getenv("HAMGAN_SOURCE_DIR")) + "/configs/fmnist32_sagan.yaml";
  const std::vector<std::string> overrides = {"generator.ch=4", "discriminator.ch=4", "train.batch_size=4"};
  std::vector<std::string> args = {"train", "-c", cfg, "--iters", "2", "--warmup", "1", "--json", "--profile", "--threads", "1"};
  args.insert(args.end(), overrides.begin(), overrides.end());
  const std::string out = test::run_cli(cli::bench, "bench", args);
  const Config c = load_config(cfg, overrides);
  const int64_t params_g = count_params(*Generator(c.model, c.generator));
  const int64_t params_d = count_params(*Discriminator(c.model, c.discriminator));
  const std::string json = dir + "/bench.json";
  std::ofstream(json) << out;
  const std::string py = "import json,sys\nd=json.load(open(sys.argv[1]))\n"
                         "assert d['iters']==2 and d['batch']==4 and d['bound']=='cpu' and d['device_busy'] is None, d\n"
                         "assert abs(d['images_per_s']-d['batch']*d['n_dis']*1000/d['ms_per_iteration'])<1e-3*d['images_per_s'], d\n"
                         "assert [p['phase'] for p in d['phases']][0]=='real batch and latents', d\n"
                         "assert (d['params_g'], d['params_d'])==(" + std::to_string(params_g) + ", " +
                         std::to_string(params_d) + "), d\n"
                         "print('ok')\n";
  std::ofstream(dir + "/check.py") << py;
  const std::string cmd = "/usr/bin/python3 " + dir + "/check.py " + json + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  std::string said;
  while (fgets(buf, sizeof buf, p)) said += buf;
  EXPECT_EQ(pclose(p), 0) << said << "\n" << out;
  EXPECT_EQ(said, "ok\n") << out;
}

// `bench train --batch N` is train.batch_size=N, checked as `train` checks it: 6 with D's
// minibatch-stddev groups of 4 is refused by both, not timed by one. `--trace` on a LibTorch
// that writes no traces (Kineto not built in) is refused before the profile runs.
TEST(TrainBench, ABatchTrainRefusesIsRefusedAndATraceNoLibTorchWritesIsRefusedFirst) {
  const std::string cfg = std::string(std::getenv("HAMGAN_SOURCE_DIR")) + "/configs/fmnist32_quickstart.yaml";
  std::string e;
  try {
    test::run_cli(cli::bench, "bench", {"train", "-c", cfg, "--batch", "6", "--iters", "1", "--threads", "1"});
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("with discriminator.mbstd_group 4"), std::string::npos) << e;
  EXPECT_NE(e.find("got 6"), std::string::npos) << e;
  const std::string trace = test::created_dir("bench", "trace") + "/t.json";
  try {
    e.clear();
    test::run_cli(cli::bench, "bench",
                  {"train", "-c", cfg, "--iters", "1", "--warmup", "0", "--profile", "--trace", trace, "--threads", "1",
                   "generator.ch=4", "discriminator.ch=4"});
  } catch (const Error& err) {
    e = err.what();
  }
  if (compat::writes_traces()) {  // the pip wheel's LibTorch: the trace is written
    EXPECT_EQ(e, "");
    EXPECT_TRUE(std::ifstream(trace).good());
  } else {  // Debian's 1.13: refused before the profile, nothing written
    EXPECT_NE(e.find("built without Kineto"), std::string::npos) << e;
    EXPECT_FALSE(std::ifstream(trace).good());
  }
}

// `bench context --shape` past the machine (an attention map of 10^25 entries) is refused before
// anything is allocated, naming the shape.
TEST(ContextBench, AShapeNoMachineHoldsIsRefused) {
  std::string e;
  try {
    test::run_cli(cli::bench, "bench", {"context", "--shape", "100000x100000x100000x100000"});
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("--shape '100000x100000x100000x100000'"), std::string::npos) << e;
  EXPECT_NE(e.find("more than this machine's"), std::string::npos) << e;
}

}  // namespace test_bench
