// `hamgan train --config FILE --out DIR [key=value ...]`: trains, or resumes from the newest
// valid checkpoint in DIR/checkpoints. --synthetic trains on SyntheticDataset (smoke runs).
#include <algorithm>
#include <csignal>
#include <filesystem>

#include "core/error.h"
#include "core/threads.h"
#include "gan/cli/commands.h"
#include "gan/eval/train_scorer.h"
#include "gan/models/model_size.h"
#include "gan/train/launcher.h"
#include "gan/train/signals.h"
#include "gan/train/train_job.h"
#include "io/dir_lock.h"

namespace hamgan::cli {

namespace fs = std::filesystem;

namespace {

// The models fit this machine before anything is built: on the CPU training holds weights,
// gradients, Adam's two moments and EMA G; for a GPU the host builds G and D once.
void check_training_fits(const Config& cfg) {
  const bool cpu = train_device(word_of(cfg.train.device, kDeviceWords)).is_cpu();
  check_models_fit_memory(cfg, cpu ? 5 : 1,
                          cpu ? "training on the CPU (weights, gradients, Adam's moments, EMA G)" : "building them");
}

}  // namespace

int train(int argc, char** argv) {
  cxxopts::Options opts("hamgan train", "Train a class-conditional GAN (resumes from --out)");
  add_config_options(opts, "configs/fmnist32_sagan.yaml");
  add_out_option(opts, "the run directory (checkpoints/, samples/, metrics.jsonl; resumed when it holds a run)");
  opts.add_options()("synthetic", "train on a synthetic dataset instead of data.*")(
      "nproc", "data-parallel worker processes on this machine (Gloo, or NCCL on CUDA: train.dist_backend); "
               "for many nodes start each worker with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT instead",
      cxxopts::value<int>()->default_value("1"));
  add_workers_option(opts);
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  const std::string out = out_of(r);
  const int nproc = r["nproc"].as<int>();
  if (nproc < 1 || nproc > 1024) fail("--nproc: expected 1..1024, got ", nproc);
  const DistEnv env = dist_env_from_environment();
  // Two launchers for one run: --nproc would start its own ranks inside a rank that the
  // environment's launcher started; which one the user meant is not ours to guess.
  if (nproc > 1 && env.enabled())
    fail("--nproc ", nproc, " and WORLD_SIZE=", env.world_size, " (RANK=", env.rank, ") in the environment: give one "
         "(--nproc starts its own ranks on this machine; RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT make this process one "
         "rank of another launcher's)");
  if (nproc > 1 && !env.enabled()) {
    check_training_fits(config_from(r));  // a bad config fails once, here, not in every worker
    // A run another process trains is refused here, once and by name, not by rank 0 while the
    // other ranks report its departure in the process group's words.
    if (std::error_code ec; fs::is_directory(out, ec)) io::DirLock{out};
    return launch_local_ranks(nproc, argc, argv);
  }
  attach_to_launcher();  // a rank whose launcher is already gone stops here, saying so
  // A rank of torchrun's without --threads gets its share of the cores, as --nproc gives it.
  if (!r.count("threads") && env.local_world_size > 1)
    hamgan::set_threads(std::max(1, threads_of(r) / env.local_world_size));
  else
    set_threads(r);
  TrainJob job;
  job.cfg = config_from(r);
  // Before anything is built: on the CPU training holds weights, gradients, Adam's two moments
  // and EMA G in memory; on a GPU the host builds G and D once.
  check_training_fits(job.cfg);
  job.out_dir = out;
  job.synthetic = r.count("synthetic") > 0;
  job.workers = workers_of(r);
  // --synthetic replaces data.*: scores against data.path would compare G with images this run
  // never trains on.
  if (job.synthetic && job.cfg.eval.every > 0 && job.cfg.eval.real.empty())
    fail("--synthetic with eval.every=", job.cfg.eval.every, ": the scores would compare G with data.path (",
         job.cfg.data.path, "), which a synthetic run does not train on; set eval.every=0, or name a "
         "reference of the synthetic images in eval.real");
  // The scorer's feature network and reference load before training starts: a bad path fails
  // before anything is written. Every rank samples its share of a score, on its own device.
  if (job.cfg.eval.every > 0)
    job.make_eval = [&job, rank = env.rank](torch::Device device) {
      return eval::make_train_scorer(job.cfg, job.out_dir, rank, device);
    };
  // A run stopped by a signal (checkpointed, resumable) exits as a shell's command the signal
  // stopped would, 128 + its number (130 for Ctrl-C, 143 for SIGTERM), so that a wrapper tells it
  // from a finished one; the time limit is a finish the config asked for (0).
  if (run_train_job(job, env).outcome == TrainOutcome::Interrupted)
    return 128 + (StopOnSignal::requested() ? StopOnSignal::requested() : SIGTERM);
  return 0;
}

}  // namespace hamgan::cli
