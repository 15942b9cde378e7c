// `hamgan bench context`: parameters, MACs, peak memory and time of every context module
// (gan/bench/context_bench.h).
#include "gan/bench/context_bench.h"
#include "gan/cli/commands.h"

namespace hamgan::cli {

int bench_context(int argc, char** argv) {
  cxxopts::Options opts("hamgan bench context",
                        "Parameters, MACs, peak memory and time of every context module");
  opts.add_options()("modules", "comma-separated module names (default: all registered)",
                     cxxopts::value<std::string>())(
      "shape", "BxCxHxW input (repeatable; default: the papers' table inputs and 64x256x32x32)",
      cxxopts::value<std::vector<std::string>>())(
      "bare", "the operator alone on Q = K = V = X, as the KAO/SAO tables")(
      "repeats", "timed runs per case (median reported)", cxxopts::value<int>()->default_value("3"))(
      "child", "internal: run one case in this process")("child-train", "internal");
  add_threads_option(opts);
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  ContextBenchOptions o;
  if (r.count("modules")) o.modules = r["modules"].as<std::string>();
  if (r.count("shape")) o.shapes = r["shape"].as<std::vector<std::string>>();
  o.bare = r.count("bare") > 0;
  o.repeats = r["repeats"].as<int>();
  o.threads = threads_of(r);
  set_threads(r);
  if (r.count("child")) run_context_bench_case(o, r.count("child-train") > 0);
  else run_context_bench(o);
  return 0;
}

}  // namespace hamgan::cli
