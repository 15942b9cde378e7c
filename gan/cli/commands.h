// Subcommands of the `hamgan` executable; each takes the arguments after its name.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gan/cli/common_flags.h"  // cxxopts and the shared flags

namespace hamgan::sample {
struct SamplerOptions;
}

namespace hamgan::cli {

struct Command {
  std::string name;
  std::string help;
  std::function<int(int, char**)> run;
};
const std::vector<Command>& commands();

// Adds -h/--help and parses; after printing the help, nullopt (the command returns 0).
std::optional<cxxopts::ParseResult> parse_or_help(cxxopts::Options& o, int argc, char** argv);
// Options every command that reads a config shares: --config, --threads, and trailing
// key.sub=value overrides.
void add_config_options(cxxopts::Options& opts, const std::string& default_config);
Config config_from(const cxxopts::ParseResult& r);

int info(int argc, char** argv);
int prepare(int argc, char** argv);
int train(int argc, char** argv);
int bench(int argc, char** argv);  // dispatches to the bench_* sub-benchmarks
int bench_train(int argc, char** argv);
int bench_context(int argc, char** argv);
int fid(int argc, char** argv);
int sample_cmd(int argc, char** argv);  // hamgan sample
int classifier(int argc, char** argv);  // hamgan classifier train (gan/cli/classifier.cpp)
int compare(int argc, char** argv);     // hamgan compare --run A --run B ... --out PREFIX
int dgap(int argc, char** argv);        // hamgan dgap --run DIR (gan/eval/d_gap.h)
// The sampling options `sample` and `fid --checkpoint/--run` share (gan/cli/sample.cpp):
// --checkpoint --seed --truncation --no-ema; sampler_options also reads --batch (add_batch_option)
// and --device.
void add_sample_options(cxxopts::Options& o);
// The generator a command reads, as `sample` does: --checkpoint --no-ema --standing-batches.
void add_generator_options(cxxopts::Options& o);
int export_cmd(int argc, char** argv);  // hamgan export (gan/cli/export.cpp)
sample::SamplerOptions sampler_options(const cxxopts::ParseResult& r);

}  // namespace hamgan::cli
