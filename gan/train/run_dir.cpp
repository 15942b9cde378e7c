#include "gan/train/run_dir.h"

#include <algorithm>
#include <chrono>
#include <vector>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "core/error.h"
#include "gan/sample/grid.h"
#include "gan/sample/image_folder.h"
#include "gan/train/trainer.h"
#include "io/atomic_file.h"
#include "io/output_path.h"
#include "io/png.h"
#include "plot/labeled_grid.h"

namespace hamgan {

namespace fs = std::filesystem;

RunDir::RunDir(const std::string& dir, bool lead)
    : dir_(dir), ckpt_dir_(fs::path(dir) / "checkpoints"), sample_dir_(fs::path(dir) / "samples"),
      lead_(lead) {
  if (dir.empty()) fail("train: an output directory is needed");
  std::error_code ec;
  for (const fs::path& d : {fs::path(dir), ckpt_dir_, sample_dir_})
    if (fs::exists(d, ec) && !fs::is_directory(d, ec))
      fail("--out ", dir, ": ", d == fs::path(dir) ? std::string() : d.string() + " ", "exists and is ",
           io::describe_existing(d.string()), "; expected a run directory (a folder, created when missing): choose "
           "another --out");
  // A new run's own files are checked before its folders and lock appear in a user's folder.
  if (lead_ && checkpoint_files(ckpt_dir_.string()).empty()) check_own_files();
  for (const fs::path& d : {ckpt_dir_, sample_dir_}) {
    fs::create_directories(d, ec);
    if (ec) fail("--out ", dir, ": cannot create the run directory's ", d.string(), " (", ec.message(), ")");
  }
  if (!lead_) return;
  lock_.emplace(dir_);
  remove_temporaries(ckpt_dir_.string());
}

std::optional<CheckpointData> RunDir::resume(const Config& cfg, torch::Device device, std::ostream& out,
                                             const std::vector<std::string>& class_names) {
  std::ostringstream warnings;
  std::optional<CheckpointData> c;
  try {
    c = load_latest_checkpoint(ckpt_dir_.string(), warnings, device, /*set_aside=*/lead_);
  } catch (const Error&) {
    out << warnings.str();  // what was set aside before the failure
    throw;
  }
  out << warnings.str();
  if (c) {
    last_ckpt_ = c->iteration;
  } else if (lead_) {
    check_own_files();
    io::write_file_atomically((fs::path(dir_) / "config.yaml").string(),
                              std::string(kRunConfigHeader) + "\n" + to_yaml(cfg.resolved) + "\n");
    if (!class_names.empty()) io::write_file_atomically((fs::path(dir_) / "classes.txt").string(), sample::classes_text(class_names));
  }
  return c;
}

// config.yaml is the run's when its first line is hamgan's header; classes.txt when it is a
// class list beside such a config.yaml (hamgan writes config.yaml first). Anything else there
// is the user's, e.g. the preset this very command reads with -c DIR/config.yaml, or class
// names that `hamgan sample` would copy as this run's.
void RunDir::check_own_files() const {
  const auto refuse = [this](const std::string& name, const std::string& expected) {
    const std::string path = (fs::path(dir_) / name).string();
    fail("--out ", dir_, " holds a ", name, " that hamgan did not write (", path, " is ", io::describe_existing(path),
         "; expected ", expected, "); a new run writes its own ", name,
         " there and never replaces another file: move that one away or keep it under another name "
         "(a preset for -c, say ", (fs::path(dir_) / "preset.yaml").string(),
         "), or choose another --out; it is left as it is");
  };
  std::error_code ec;
  const auto there = [&](const char* name) { return fs::exists(fs::symlink_status(fs::path(dir_) / name, ec)); };
  static const io::OutputKind config = io::text_output(
      std::string("the config that hamgan train writes into a new run, whose first line is '") + kRunConfigHeader + "'",
      {kRunConfigHeader});
  const auto ours = [this](const char* name, const io::OutputKind& kind) {
    try {
      io::check_output_path((fs::path(dir_) / name).string(), kind);
      return true;
    } catch (const Error&) {
      return false;
    }
  };
  const bool config_there = there("config.yaml");
  if (config_there && !ours("config.yaml", config)) refuse("config.yaml", config.what);
  if (there("classes.txt") && (!config_there || !ours("classes.txt", sample::classes_output())))
    refuse("classes.txt", sample::classes_output().what + " beside the config.yaml hamgan wrote");
}

std::string RunDir::checkpoint_path(int64_t iteration) const {
  return hamgan::checkpoint_path(ckpt_dir_.string(), iteration);
}

void RunDir::save_checkpoint(Trainer& t, const LoaderState& loader, int64_t keep, bool standing) {
  last_ckpt_ = t.iteration();
  t.share_rank_rng();  // every rank: a collective
  if (!lead_) return;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string path = checkpoint_path(t.iteration());
  // G, D, Adam's two moments of each and EMA G, in fp32: a line before a write of that size
  // (981 MB for HamGAN-128, 7-8 s here), so a slow disk is never silence.
  int64_t g_params = 0, d_params = 0;
  for (const auto& p : t.g()->parameters()) g_params += p.numel();
  for (const auto& p : t.d()->parameters()) d_params += p.numel();
  const double mb = 4e-6 * static_cast<double>(3 * (g_params + d_params) + (t.g_ema() ? g_params : 0));
  if (mb > 200 && say_) {
    char line[64];
    std::snprintf(line, sizeof line, " (about %.0f MB)", mb);
    say_("writing checkpoint " + path + line);
  }
  t.save(path, loader, standing);
  prune_checkpoints(ckpt_dir_.string(), keep);
  // A 128 px model's checkpoint is hundreds of MB: say what took the time.
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (s > 2 && say_) {
    char line[96];
    std::snprintf(line, sizeof line, " written (%.0f MB, %.1f s)", std::filesystem::file_size(path) / 1e6, s);
    say_("checkpoint " + path + line);
  }
}

torch::Tensor RunDir::save_grid(Trainer& t) {
  if (!lead_) return {};
  const Config& cfg = t.config();
  if (!grid_z_.defined())
    std::tie(grid_z_, grid_y_) =
        sample::training_grid_latents(cfg.model.n_classes, cfg.generator.z_dim, cfg.train.seed);
  char name[64];
  std::snprintf(name, sizeof name, "samples_%09lld.png", static_cast<long long>(t.iteration()));
  // A micro-batch at a time, with progress: 80 images of a 128 px model are seconds each batch.
  const int64_t n = grid_z_.size(0), b = std::min(n, std::max<int64_t>(1, t.micro_batch()));
  std::vector<torch::Tensor> images = {t.sample(grid_z_.narrow(0, 0, b), grid_y_.narrow(0, 0, b))};  // standing stats first
  PhaseProgress progress(say_, std::string("grid ") + name, n, "images");
  progress.add(b);
  for (int64_t i = b; i < n; i += b) {
    const int64_t k = std::min(b, n - i);
    images.push_back(t.sample(grid_z_.narrow(0, i, k), grid_y_.narrow(0, i, k)));
    progress.add(k);
  }
  const torch::Tensor grid = labeled_grid(torch::cat(images), grid_y_, 8);
  write_png((sample_dir_ / name).string(), grid);
  return grid;
}

}  // namespace hamgan
