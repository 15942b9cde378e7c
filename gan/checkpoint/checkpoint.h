// Training checkpoints: one zip archive (torch::serialize) per save holding G, D, EMA G,
// both Adam states, the iteration, RNG states, the loader position and the resolved
// config as YAML text, plus a format version. Files are written to a temporary name,
// fsync'ed and renamed, so a crash mid-write never leaves a broken checkpoint.
// Layout: <dir>/ckpt_<iteration, 9 digits>.pt.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gan/config/config.h"
#include "gan/data/dataset.h"
#include "gan/models/generator.h"

namespace hamgan {

constexpr int64_t kCheckpointVersion = 1;

struct CheckpointWrite {
  int64_t iteration = 0;
  std::string config_yaml;
  torch::nn::Module* g = nullptr;
  torch::nn::Module* d = nullptr;
  torch::nn::Module* g_ema = nullptr;  // null when EMA is off
  int64_t ema_standing = 0;  // batches of standing statistics in g_ema's BN (0: the live G's)
  torch::optim::Optimizer* opt_g = nullptr;
  torch::optim::Optimizer* opt_d = nullptr;
  LoaderState loader;
  std::vector<std::pair<std::string, torch::Tensor>> rng;  // name -> generator state
  std::vector<std::pair<std::string, torch::Tensor>> train_state;  // name -> loss state (LeCam's anchors)
};

struct CheckpointData {
  std::string path;
  int64_t version = 0, iteration = 0;
  std::string config_yaml;
  Config config;  // parsed from config_yaml
  bool has_ema = false;
  int64_t ema_standing = 0;  // > 0: g_ema's BN holds standing statistics (older files: 0)
  LoaderState loader;
  std::shared_ptr<torch::serialize::InputArchive> archive;

  // Loads "g", "d", "g_ema", "opt_g" or "opt_d" into a module / optimizer built like the
  // one saved. Errors name the file and the part.
  void load_module(const std::string& part, torch::nn::Module& m) const;
  void load_optimizer(const std::string& part, torch::optim::Optimizer& opt) const;
  torch::Tensor rng_state(const std::string& name) const;  // missing: hamgan::Error
  // nullopt when the checkpoint has no such state ("cuda_default" of a CPU run).
  std::optional<torch::Tensor> find_rng_state(const std::string& name) const;
  // A loss's state across steps; nullopt when absent (older files, or that loss was off).
  std::optional<torch::Tensor> find_train_state(const std::string& name) const;
};

// Atomic (io::write_file_atomically): a temporary, fsync, rename, fsync of the directory.
void save_checkpoint(const std::string& path, const CheckpointWrite& c);
// Reads and validates the whole file (tensors land on `device`). Before LibTorch reads it, every
// size it declares is bounded by the file: each record's CRC, what compressed members inflate
// to, each storage against its record, each tensor view against its storage
// (torch_file::verify_script_archive); then counts (iteration, loader position) must not be
// negative and the stored config must not build models larger than the file holds. Any damage
// or craft: hamgan::Error naming the file and what was expected, in memory bounded by its size.
CheckpointData load_checkpoint(const std::string& path, torch::Device device = torch::kCPU);
// G (or EMA G when `ema` and the checkpoint has one) rebuilt from the stored config, eval mode.
// An EMA G stored without standing statistics gets them here (train.ema_standing_batches);
// standing_batches > 0 re-estimates them over that many batches whatever is stored.
Generator load_generator(const CheckpointData& c, bool ema, torch::Device device = torch::kCPU,
                         int64_t standing_batches = 0);

std::string checkpoint_path(const std::string& dir, int64_t iteration);
// Checkpoint files in `dir` (ckpt_<iteration>.pt), newest (highest iteration) first;
// temporaries ignored, names with an out-of-range iteration reported on `warn` and ignored.
struct CheckpointFile {
  int64_t iteration;
  std::string path;
};
std::vector<CheckpointFile> checkpoint_files(const std::string& dir, std::ostream* warn = nullptr);
// Their paths.
std::vector<std::string> list_checkpoints(const std::string& dir, std::ostream* warn = nullptr);
// Deletes all but the newest `keep` checkpoints that verify (they load, and hold the iteration
// their name says); damaged files neither count nor are deleted. An unreadable file: Error.
void prune_checkpoints(const std::string& dir, int64_t keep);
// Deletes temporaries a killed writer left in `dir` (they would keep a full disk full).
// Call only while holding the run's lock.
void remove_temporaries(const std::string& dir);
// The newest checkpoint that loads and holds the iteration its name says; each damaged newer
// one is reported on `warn` and skipped, the warning saying what the run resumes from instead
// (the previous checkpoint, or iteration 0 when none is valid). One that cannot be read
// (permissions, I/O): Error. `set_aside` (train, holding the run's lock): each damaged one is
// renamed to <name>.damaged (<name>.damaged.N when taken) and the warning says so, so a run that
// reaches its iteration again never replaces it; a rename that fails is an Error.
std::optional<CheckpointData> load_latest_checkpoint(const std::string& dir, std::ostream& warn,
                                                     torch::Device device = torch::kCPU, bool set_aside = false);

}  // namespace hamgan
