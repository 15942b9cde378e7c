// The flags that mean one thing wherever they appear, each declared here only: its spelling,
// help text, default and checks, with the config key's name where the flag stands for one
// (config keys and flags share one name and one default). A flag whose value differs in kind
// between commands (--out is a directory, a file or a prefix) keeps one spelling, one help
// prefix and one error, and the command says what it writes.
#pragma once
#include <cstdint>
#include <string>

// cxxopts splits every vector-valued option at ',' by default, so `eval.metrics=fid,pr`
// reached the config as two overrides and `--run a,b` as two runs: split at nothing a command
// line holds instead. The only include of cxxopts.hpp, so every file agrees.
#define CXXOPTS_VECTOR_DELIMITER '\0'
#include <cxxopts.hpp>

#include "gan/config/config.h"

namespace hamgan::cli {

// --threads: CPU threads, default all cores, at most 4 x the cores.
void add_threads_option(cxxopts::Options& o);
int threads_of(const cxxopts::ParseResult& r);
// hamgan::set_threads(threads_of(r)) (core/threads.h): Debian's build defaults to 1.
void set_threads(const cxxopts::ParseResult& r);
// --workers: threads that read and decode images (default 2).
void add_workers_option(cxxopts::Options& o);
int64_t workers_of(const cxxopts::ParseResult& r);
// --device: cpu, cuda or auto (default auto), as train.device.
void add_device_option(cxxopts::Options& o);
// --seed (default 0); `what` says what it seeds.
void add_seed_option(cxxopts::Options& o, const std::string& what);
// --format (data.format's words; default auto: detected from the path); `of` names what it reads.
void add_format_option(cxxopts::Options& o, const std::string& of);
DataFormat format_of(const cxxopts::ParseResult& r);

// -o, --out: "where to write: " + `what` (the command's files). out_of: its value; absent, the
// one error every command gives (kMissingOut).
extern const char* const kMissingOut;
void add_out_option(cxxopts::Options& o, const std::string& what);
std::string out_of(const cxxopts::ParseResult& r);
// --overwrite: --out may already hold `what`, which is replaced.
void add_overwrite_option(cxxopts::Options& o, const std::string& what);

// --batch, images per forward batch through the generator and the feature network (default
// 50): memory and speed only, the images and scores do not depend on it.
void add_batch_option(cxxopts::Options& o);
int64_t batch_of(const cxxopts::ParseResult& r);
// --batch of GAN training, as train.batch_size (default: the config's, else train.batch_size's
// default): a different meaning from add_batch_option's, so a different default.
void add_train_batch_option(cxxopts::Options& o);
int64_t train_batch_of(const cxxopts::ParseResult& r, int64_t config_batch);

// --standing-batches (sample, export): re-estimate the EMA generator's BN standing statistics
// over N batches (default 0: the checkpoint's), 0..kMaxStandingBatches as
// train.ema_standing_batches.
void add_standing_batches_option(cxxopts::Options& o);
int64_t standing_batches_of(const cxxopts::ParseResult& r);

// -n, --count: a number of images (>= 0); `what` says which, `default_value` its default.
void add_count_option(cxxopts::Options& o, const std::string& what, const std::string& default_value);
int64_t count_of(const cxxopts::ParseResult& r);

// --data: a data source, as data.path.
void add_data_option(cxxopts::Options& o);
// --resolution: image side in pixels, as model.resolution; absent: `fallback` (what the
// command's config, classifier or checkpoint says, else kDefaultResolution).
inline constexpr int64_t kDefaultResolution = 32;
void add_resolution_option(cxxopts::Options& o);
int64_t resolution_of(const cxxopts::ParseResult& r, int64_t fallback);
// --channels: 1 or 3, as model.image_channels (default 0: the config's, classifier's or
// checkpoint's, else 1 for fmnist and 3 otherwise; default_channels of gan/data/sources.h does
// the last step).
void add_channels_option(cxxopts::Options& o);
int64_t channels_of(const cxxopts::ParseResult& r);

// The evaluation flags, as the eval: keys: --features (eval.features), --real (eval.real),
// --metrics (eval.metrics; its help lists the metric registry).
void add_features_option(cxxopts::Options& o);
void add_real_option(cxxopts::Options& o);
void add_metrics_option(cxxopts::Options& o);

}  // namespace hamgan::cli
