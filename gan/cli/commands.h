// Subcommands of the `hamgan` executable; each takes the arguments after its name.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

// cxxopts splits every vector-valued option at ',' by default, so `train.eval_metrics=fid,pr`
// reached the config as two overrides and `--run a,b` as two runs: split at nothing a command
// line holds instead. The only include of cxxopts.hpp, so every file agrees.
#define CXXOPTS_VECTOR_DELIMITER '\0'
#include <cxxopts.hpp>

#include "gan/config/config.h"

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
// The flags with one meaning wherever they appear, each declared here only: --threads (CPU
// threads, default all cores, at most 4 x the cores), --workers (threads that read and decode images; default
// 2), --device (cpu, cuda or auto, default auto, as train.device), --seed (default 0; `what`
// says what it seeds).
void add_threads_option(cxxopts::Options& o);
int threads_of(const cxxopts::ParseResult& r);
// hamgan::set_threads(threads_of(r)) (core/threads.h): Debian's build defaults to 1.
void set_threads(const cxxopts::ParseResult& r);
void add_workers_option(cxxopts::Options& o);
void add_device_option(cxxopts::Options& o);
void add_seed_option(cxxopts::Options& o, const std::string& what);
int64_t workers_of(const cxxopts::ParseResult& r);
// --format (data.format's words; default auto: detected from the path); `of` names what it reads.
void add_format_option(cxxopts::Options& o, const std::string& of);
DataFormat format_of(const cxxopts::ParseResult& r);

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
// --checkpoint --seed --truncation --no-ema; sampler_options also reads --batch and --device.
void add_sample_options(cxxopts::Options& o);
// The generator a command reads, as `sample` does: --checkpoint --no-ema --standing-batches.
void add_generator_options(cxxopts::Options& o);
int export_cmd(int argc, char** argv);  // hamgan export (gan/cli/export.cpp)
sample::SamplerOptions sampler_options(const cxxopts::ParseResult& r);

}  // namespace hamgan::cli
