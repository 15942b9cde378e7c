#include "gan/bench/context_bench.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>

#include "core/config_reader.h"
#include "core/error.h"
#include "core/mac_counter.h"
#include "core/parse_number.h"
#include "core/machine_memory.h"
#include "layers/context/bare_operator.h"
#include "layers/context/context.h"

namespace hamgan {

namespace {

const std::vector<std::string> kDefaultShapes = {
    "1x512x128x128",                           // Hamburger paper, Table 3
    "8x8x14x14", "8x8x28x28", "8x8x56x56",     // KAO paper, Table 1 (B x spatial x C = 8)
    "1x64x14x14", "1x128x28x28", "1x256x56x56",  // SAO paper, Table 2
    "64x256x32x32",                            // this GAN's G context slot
};

std::vector<int64_t> parse_shape(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    int64_t d = 0;
    if (!parse_int(part, d) || d < 1) fail("--shape '", s, "': expected BxCxHxW with positive integers");
    v.push_back(d);
  }
  if (v.size() != 4) fail("--shape '", s, "': expected BxCxHxW (4 numbers), got ", v.size());
  // Before anything is allocated: the input and an attention map over its positions (B x HW x
  // HW), a few fp32 copies each, must fit the machine (in doubles: the products overflow int64).
  const double b = static_cast<double>(v[0]), hw = static_cast<double>(v[2]) * static_cast<double>(v[3]);
  const double bytes = 16 * std::max(b * static_cast<double>(v[1]) * hw, b * hw * hw);
  const int64_t have = physical_memory_bytes();
  if (have > 0 && bytes > static_cast<double>(have))
    fail("--shape '", s, "': its tensors (the input and an attention map of ", b * hw * hw, " entries) need about ",
         bytes / 1e9, " GB, more than this machine's ", static_cast<double>(have) / 1e9, " GB; expected a smaller shape");
  return v;
}

long peak_rss_kb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// Loads kernels and starts thread pools on tiny tensors, so the process's fixed start-up
// memory is part of the baseline and not charged to the first case.
void warm_up_library() {
  torch::Tensor a = torch::randn({2, 4, 4, 4}, torch::requires_grad());
  torch::Tensor w = torch::randn({4, 4, 1, 1}, torch::requires_grad());
  torch::Tensor y = torch::conv2d(a, w);
  y = torch::max_pool2d(y, {2, 2}).flatten(2);
  y = torch::softmax(torch::bmm(y.transpose(1, 2), y), 1).sum() + torch::matmul(y, y.transpose(1, 2)).mean(1).sum();
  y.backward();
}

struct ChildResult {
  bool ok = false;
  std::string error;
  int64_t params = 0, macs = 0;
  double mem_mb = 0, time_ms = 0;
};

// The child: build, record the peak so far, run once counting MACs, then time `repeats` runs.
// Prints "OK params macs baseline_kb median_ms" or "ERR message".
int run_child(const std::string& module, const std::vector<int64_t>& s, bool train, bool bare,
              int repeats) {
  try {
    torch::manual_seed(0);
    const int64_t b = s[0], c = s[1], h = s[2], w = s[3];
    std::function<torch::Tensor()> step;
    std::vector<torch::Tensor> params;
    torch::Tensor x;
    ContextModule m;
    if (bare) {
      const auto make = bare_operator(module);
      if (!make) fail(module, ": no bare operator");
      const BareOperator op = make(c);
      params = op.params;
      x = torch::randn({b, c, h * w});
      step = [op, x, h, w] { return op.op(x, x, x, h, w); };
    } else {
      YAML::Node n = YAML::Load("{type: " + module + "}");
      const ContextConfig cc =
          parse_context_config(ConfigNode(n, "context", std::make_shared<ConfigSource>()));
      ContextSpec spec;
      spec.channels = c;
      spec.height = h;
      spec.width = w;
      spec.sn.eps = 1e-6;
      spec.options = cc.options;
      m = context_entry(module).create(spec);
      if (!m) fail(module, ": no module");
      for (const auto& p : m->parameters()) params.push_back(p);
      x = torch::randn({b, c, h, w});
      m->train(train);
      step = [m, x] { return m->forward(x, {}); };
    }
    int64_t n_params = 0;
    for (const auto& p : params) n_params += p.numel();
    if (train) {
      x.requires_grad_(true);
      for (auto& p : params) p.requires_grad_(true);
    }
    auto once = [&] {
      if (train) {
        step().sum().backward();
      } else {
        torch::NoGradGuard ng;
        step();
      }
    };
    warm_up_library();
    const long base = peak_rss_kb();
    int64_t macs = 0;
    {
      torch::NoGradGuard ng;
      MacCounter mc;  // forward MACs, counted on an inference pass
      if (m) m->eval();
      step();
      macs = mc.macs();
      if (m) m->train(train);
    }
    once();  // warm-up
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      once();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("OK %lld %lld %ld %.3f\n", (long long)n_params, (long long)macs, base,
                ms.empty() ? 0.0 : ms[ms.size() / 2]);
  } catch (const c10::Error& e) {
    std::printf("ERR %s\n", e.what_without_backtrace());
  } catch (const std::exception& e) {
    std::printf("ERR %s\n", e.what());
  }
  std::fflush(stdout);
  return 0;
}

ChildResult spawn(const std::string& module, const std::string& shape, bool train, bool bare,
                  int repeats, int threads) {
  int fd[2];
  if (pipe(fd)) fail("bench context: pipe failed");
  const std::vector<std::string> args = {
      "hamgan", "bench", "context", "--child", "--modules", module, "--shape", shape,
      "--repeats", std::to_string(repeats), "--threads", std::to_string(threads),
      train ? "--child-train" : "--bare-off", bare ? "--bare" : "--bare-off"};
  const pid_t pid = fork();
  if (pid < 0) fail("bench context: fork failed");
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    std::vector<char*> argv;
    for (const auto& a : args)
      if (a != "--bare-off") argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(fd[1]);
  std::string out;
  char buf[4096];
  ssize_t r;
  while ((r = read(fd[0], buf, sizeof buf)) > 0) out.append(buf, size_t(r));
  close(fd[0]);
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  ChildResult res;
  std::istringstream is(out);
  std::string tag;
  is >> tag;
  if (tag == "OK") {
    long base = 0;
    is >> res.params >> res.macs >> base >> res.time_ms;
    res.mem_mb = double(ru.ru_maxrss - base) / 1024.0;
    res.ok = true;
  } else if (tag == "ERR") {
    std::getline(is, res.error);
    res.error = res.error.substr(res.error.find_first_not_of(' ') == std::string::npos
                                     ? 0 : res.error.find_first_not_of(' '));
  } else {
    res.error = "child died (status " + std::to_string(status) + ")";
  }
  return res;
}

std::string si(double v) {
  char b[32];
  if (v >= 1e9) std::snprintf(b, sizeof b, "%.2fG", v / 1e9);
  else if (v >= 1e6) std::snprintf(b, sizeof b, "%.2fM", v / 1e6);
  else if (v >= 1e3) std::snprintf(b, sizeof b, "%.2fK", v / 1e3);
  else std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

std::vector<std::string> module_list(const std::string& list) {
  std::vector<std::string> modules;
  if (!list.empty()) {
    std::stringstream ss(list);
    std::string m;
    while (std::getline(ss, m, ','))
      if (!m.empty()) {
        context_entry(m);  // fails naming the known modules
        modules.push_back(m);
      }
  } else {
    for (const auto& n : context_names())
      if (n != "none") modules.push_back(n);
  }
  if (modules.empty()) fail("--modules '", list, "': expected at least one module name");
  return modules;
}

std::vector<std::string> checked_shapes(const ContextBenchOptions& o) {
  if (o.repeats < 0 || o.repeats > 1000) fail("--repeats: expected 0..1000, got ", o.repeats);
  const std::vector<std::string> shapes = o.shapes.empty() ? kDefaultShapes : o.shapes;
  for (const auto& s : shapes) parse_shape(s);
  return shapes;
}

}  // namespace

void run_context_bench_case(const ContextBenchOptions& o, bool train) {
  run_child(module_list(o.modules).at(0), parse_shape(checked_shapes(o).at(0)), train, o.bare, o.repeats);
}

void run_context_bench(const ContextBenchOptions& o) {
  const std::vector<std::string> shapes = checked_shapes(o), modules = module_list(o.modules);
  const bool bare = o.bare;
  std::printf("%s, %d thread(s), median of %d; memory = peak RSS increase of a fresh process\n",
              bare ? "bare operators on Q = K = V = X" : "modules with their wrappers", o.threads, o.repeats);
  std::printf("%-16s %-14s %10s %10s %12s %12s %12s %12s\n", "module", "input BxCxHxW", "params",
              "MACs", "mem infer", "mem train", "time infer", "time train");
  int failed = 0, cases = 0;
  for (const auto& s : shapes)
    for (const auto& m : modules) {
      ++cases;
      if (bare && !bare_operator(m)) {
        std::printf("%-16s %-14s (no bare operator)\n", m.c_str(), s.c_str());
        continue;
      }
      const ChildResult inf = spawn(m, s, false, bare, o.repeats, o.threads);
      if (!inf.ok) {
        ++failed;
        std::printf("%-16s %-14s error: %s\n", m.c_str(), s.c_str(), inf.error.c_str());
        std::fflush(stdout);
        continue;
      }
      const ChildResult tr = spawn(m, s, true, bare, o.repeats, o.threads);
      failed += !tr.ok;
      char mt[32], tt[32];
      std::snprintf(mt, sizeof mt, "%.1fMB", tr.mem_mb);
      std::snprintf(tt, sizeof tt, "%.2fms", tr.time_ms);
      std::printf("%-16s %-14s %10s %10s %10.1fMB %12s %10.2fms %12s%s\n", m.c_str(), s.c_str(),
                  si(double(inf.params)).c_str(), si(double(inf.macs)).c_str(), inf.mem_mb,
                  tr.ok ? mt : "error", inf.time_ms, tr.ok ? tt : "error",
                  tr.ok ? "" : ("  train error: " + tr.error).c_str());
      std::fflush(stdout);
    }
  // A table with error rows is not a benchmark result: an allocation error fails the command.
  if (failed) fail("bench context: ", failed, " of ", cases, " cases failed (the rows above say why)");
}

}  // namespace hamgan
