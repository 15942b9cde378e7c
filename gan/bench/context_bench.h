// `hamgan bench context`: cost of every registered context module (or its bare operator on
// Q = K = V = X) per input shape: parameters, multiply-accumulates counted from the ops that
// run (core/mac_counter.h), peak memory of inference and of forward+backward, and median
// times. Memory is measured: each (case, mode) runs in a fresh child process (this executable,
// exec'd as `hamgan bench context --child ...`), and the row shows its peak RSS (wait4
// ru_maxrss) minus its peak before the first run, i.e. after building the module and input.
#pragma once
#include <string>
#include <vector>

namespace hamgan {

struct ContextBenchOptions {
  std::string modules;              // comma-separated names; empty: every registered one but none
  std::vector<std::string> shapes;  // BxCxHxW; empty: the papers' table inputs and this GAN's slot
  bool bare = false;                // the operator alone, as the KAO/SAO tables
  int repeats = 3;                  // timed runs per case (median reported)
  int threads = 1;                  // CPU threads of each child
};

// Checks the options (names, shapes, counts) and prints the table on stdout; hamgan::Error
// after the table when any case failed.
void run_context_bench(const ContextBenchOptions& o);
// In the child: the first module and shape only; prints "OK params macs baseline_kb median_ms"
// or "ERR message".
void run_context_bench_case(const ContextBenchOptions& o, bool train);

}  // namespace hamgan
