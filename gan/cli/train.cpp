// `hamgan train --config FILE --out DIR [key=value ...]`: trains, or resumes from the newest
// valid checkpoint in DIR/checkpoints. --synthetic trains on SyntheticDataset (smoke runs).
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <csignal>

#include <iostream>
#include <thread>

#include "core/error.h"
#include "gan/cli/commands.h"
#include "gan/data/synthetic.h"
#include "gan/train/distributed.h"
#include "gan/train/trainer.h"

extern "C" char** environ;

namespace hamgan::cli {

namespace {

// The workers' process group: the launcher relays SIGINT/SIGTERM/SIGHUP to it exactly once
// per signal it gets, so a `kill` of the launcher (or `timeout`) stops every rank at one
// iteration with a checkpoint, and Ctrl-C (which reaches only the terminal's foreground
// group, the launcher) is not delivered twice to a worker (a second signal stops it at once).
volatile std::sig_atomic_t g_worker_group = 0;
extern "C" void relay_to_workers(int sig) {
  if (g_worker_group > 0) kill(-static_cast<pid_t>(g_worker_group), sig == SIGHUP ? SIGTERM : sig);
}

// A rank whose launcher dies gets SIGUSR1 (PR_SET_PDEATHSIG; Linux may deliver it more than
// once) and turns it into one SIGTERM: the stop request a `kill` of the launcher would relay.
volatile std::sig_atomic_t g_launcher_gone = 0;
extern "C" void on_launcher_death(int) {
  if (g_launcher_gone) return;
  g_launcher_gone = 1;
  kill(getpid(), SIGTERM);
}

void catch_signal(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

// `--nproc N`: runs this same command N times as ranks 0..N-1 on this machine (as torchrun
// would), each with its share of the cores, and waits for all of them.
int spawn_local_workers(int nproc, int argc, char** argv) {
  const int port = free_loopback_port();
  const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / nproc);
  std::vector<std::string> args = {"/proc/self/exe", "train"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nproc" || a == "--threads") { ++i; continue; }
    if (a.rfind("--nproc=", 0) == 0 || a.rfind("--threads=", 0) == 0) continue;
    args.push_back(a);
  }
  args.push_back("--threads");
  args.push_back(std::to_string(threads));
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nproc; ++rank) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string v = *e;
      if (v.rfind("RANK=", 0) && v.rfind("WORLD_SIZE=", 0) && v.rfind("MASTER_", 0)) env.push_back(v);
    }
    env.push_back("RANK=" + std::to_string(rank));
    env.push_back("WORLD_SIZE=" + std::to_string(nproc));
    env.push_back("MASTER_ADDR=127.0.0.1");
    env.push_back("MASTER_PORT=" + std::to_string(port));
    env.push_back("HAMGAN_LAUNCHER_PID=" + std::to_string(getpid()));
    std::vector<char*> av, ev;
    for (auto& a : args) av.push_back(a.data());
    av.push_back(nullptr);
    for (auto& e : env) ev.push_back(e.data());
    ev.push_back(nullptr);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, pids.empty() ? 0 : pids[0]);  // rank 0 leads the group
    pid_t pid = -1;
    const int err = posix_spawn(&pid, "/proc/self/exe", nullptr, &attr, av.data(), ev.data());
    posix_spawnattr_destroy(&attr);
    if (err != 0) {
      if (!pids.empty()) kill(-pids[0], SIGTERM);
      fail("train --nproc: cannot start worker ", rank);
    }
    pids.push_back(pid);
    if (rank == 0) {
      g_worker_group = pid;
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) catch_signal(sig, relay_to_workers);
    }
  }
  int failed = 0;
  for (size_t r = 0; r < pids.size(); ++r) {
    int status = 0;
    while (waitpid(pids[r], &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::cerr << "hamgan train: worker " << r << " failed\n";
      ++failed;
    }
  }
  return failed ? 1 : 0;
}

}  // namespace

int train(int argc, char** argv) {
  cxxopts::Options opts("hamgan train", "Train a class-conditional GAN (resumes from --out)");
  add_config_options(opts, "configs/fmnist32_sagan.yaml");
  opts.add_options()("o,out", "output directory (checkpoints/, samples/, metrics.jsonl)",
                     cxxopts::value<std::string>())(
      "synthetic", "train on a synthetic dataset instead of data.*")(
      "nproc", "data-parallel worker processes on this machine (Gloo); for many nodes start "
               "each worker with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT instead",
      cxxopts::value<int>()->default_value("1"));
  add_workers_option(opts);
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  if (!r.count("out")) fail("--out: expected an output directory");
  const int nproc = r["nproc"].as<int>();
  if (nproc < 1 || nproc > 1024) fail("--nproc: expected 1..1024, got ", nproc);
  const DistEnv env = dist_env_from_environment();
  if (nproc > 1 && !env.enabled()) {
    config_from(r);  // a bad config fails once, here, not in every worker
    return spawn_local_workers(nproc, argc, argv);
  }
  if (const char* launcher = std::getenv("HAMGAN_LAUNCHER_PID")) {
    // A rank of `--nproc`: a launcher killed outright (SIGKILL) still stops it with a
    // checkpoint, as its own SIGTERM would.
    catch_signal(SIGUSR1, on_launcher_death);
    prctl(PR_SET_PDEATHSIG, SIGUSR1);
    if (getppid() != static_cast<pid_t>(std::atoll(launcher))) return 1;  // launcher already gone
  }
  set_threads(r);
  const Config cfg = config_from(r);
  const bool synthetic = r.count("synthetic") > 0;
  const int64_t workers = workers_of(r);

  SourceFactory make_source = [&](int64_t batch, LoaderState start) -> std::unique_ptr<BatchSource> {
    const int64_t res = cfg.model.resolution, ch = cfg.model.image_channels;
    if (synthetic) {
      auto data = std::make_shared<SyntheticDataset>(std::max<int64_t>(4096, batch), res, ch,
                                                     cfg.model.n_classes, cfg.train.seed);
      // One stream per rank (the synthetic source has no shards).
      return std::make_unique<DatasetSource>(data, batch, cfg.train.seed + 1000003 * env.rank, start);
    }
    std::shared_ptr<Dataset> data = open_dataset(cfg.data, res, ch);
    if (data->num_classes() != cfg.model.n_classes)
      fail(cfg.source, ": model.n_classes is ", cfg.model.n_classes, " but the dataset has ",
           data->num_classes(), " classes");
    LoaderOptions lo;
    lo.batch_size = batch;
    lo.seed = static_cast<uint64_t>(cfg.train.seed);
    lo.workers = workers;
    lo.rank = env.rank;  // each rank reads its own shard of every epoch
    lo.world_size = env.world_size;
    lo.pin_memory = resolve_device(cfg.train.device).is_cuda();
    return std::make_unique<LoaderSource>(data, lo, start);
  };
  TrainOptions to;
  to.out_dir = r["out"].as<std::string>();
  std::unique_ptr<DataParallel> dp;
  if (env.enabled()) {
    dp = std::make_unique<DataParallel>(env, resolve_device(cfg.train.device));
    to.dp = dp.get();
  }
  hamgan::train(cfg, to, make_source);  // a signal or the time limit also ends with 0
  if (dp) dp->barrier();  // rank 0 hosts the store: nobody leaves before the checkpoint
  return 0;
}

}  // namespace hamgan::cli
