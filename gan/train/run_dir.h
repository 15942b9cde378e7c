// A training run's directory: one writer at a time (a lock held while this lives), the
// config.yaml of a new run, checkpoints with pruning and the fixed-latent class grids. Only the
// lead rank writes; the others keep the same calls (and learn the last checkpoint's iteration).
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "core/phase_progress.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/config/config.h"
#include "io/dir_lock.h"

namespace hamgan {

class Trainer;

// The first line of the config.yaml a run writes: how hamgan tells its own from a user's file.
constexpr const char* kRunConfigHeader = "# written by hamgan train: the resolved config of this run";

class RunDir {
 public:
  RunDir(const std::string& dir, bool lead);
  const std::string& path() const { return dir_; }

  // The newest valid checkpoint (warnings about damaged ones to `out`; the lead rank moves those
  // aside, load_latest_checkpoint's set_aside), or nullopt for a new run, which gets config.yaml
  // (kRunConfigHeader, then the resolved config) and, when known, classes.txt (one line per class
  // index: "000 n01440764"; `hamgan sample` copies it next to its images). A config.yaml or
  // classes.txt there that hamgan did not write is never replaced: hamgan::Error naming it.
  std::optional<CheckpointData> resume(const Config& cfg, torch::Device device, std::ostream& out,
                                       const std::vector<std::string>& class_names = {});
  // checkpoints/ckpt_<iteration>.pt, then the newest `keep` kept.
  // standing: as Trainer::save.
  void save_checkpoint(Trainer& t, const LoaderState& loader, int64_t keep, bool standing = true);
  std::string checkpoint_path(int64_t iteration) const;
  int64_t last_checkpoint() const { return last_ckpt_; }  // -1: none yet
  // samples/samples_<iteration>.png: the class grid of gan/sample/grid.h's fixed latents.
  // Returns the image written (H x W x C uint8; undefined on the other ranks).
  torch::Tensor save_grid(Trainer& t);
  // Where a slow checkpoint write is reported (the lead rank's reporter); null: nowhere.
  void set_say(PhaseProgress::Say say) { say_ = std::move(say); }

 private:
  const std::string dir_;
  const std::filesystem::path ckpt_dir_, sample_dir_;
  const bool lead_;
  std::optional<io::DirLock> lock_;
  torch::Tensor grid_z_, grid_y_;
  int64_t last_ckpt_ = -1;
  PhaseProgress::Say say_;
  // Fails when a config.yaml or classes.txt is there and not this run's.
  void check_own_files() const;
};

}  // namespace hamgan
