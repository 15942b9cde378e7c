#include "gan/train/launcher.h"

#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "gan/train/distributed.h"

extern "C" char** environ;

namespace hamgan {

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

}  // namespace

// `--nproc N`: runs this same command N times as ranks 0..N-1 on this machine (as torchrun
// would), each with its share of the cores, and waits for all of them.
int launch_local_ranks(int nproc, int argc, char** argv) {
  const int port = free_loopback_port();
  // Each rank's --threads: the user's, else its share of the cores.
  std::string threads = std::to_string(std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / nproc));
  std::vector<std::string> args = {"/proc/self/exe", "train"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nproc") { ++i; continue; }
    if (a.rfind("--nproc=", 0) == 0) continue;
    if (a == "--threads" && i + 1 < argc) { threads = argv[++i]; continue; }
    if (a.rfind("--threads=", 0) == 0) { threads = a.substr(10); continue; }
    args.push_back(a);
  }
  args.push_back("--threads");
  args.push_back(threads);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nproc; ++rank) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string v = *e;
      if (v.rfind("RANK=", 0) && v.rfind("WORLD_SIZE=", 0) && v.rfind("MASTER_", 0) && v.rfind("LOCAL_", 0) &&
          v.rfind("TORCHELASTIC_", 0))
        env.push_back(v);
    }
    env.push_back("RANK=" + std::to_string(rank));
    env.push_back("WORLD_SIZE=" + std::to_string(nproc));
    env.push_back("LOCAL_RANK=" + std::to_string(rank));
    env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(nproc));
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
  int failed = 0, stopped = 0;
  for (size_t r = 0; r < pids.size(); ++r) {
    int status = 0;
    while (waitpid(pids[r], &status, 0) < 0 && errno == EINTR) {
    }
    // Stopped by a signal, checkpointed: 128 + SIGINT or SIGTERM (gan/cli/train.cpp), no failure.
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code == 128 + SIGINT || code == 128 + SIGTERM) {
      if (!stopped) stopped = code;
      continue;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::cerr << "hamgan train: worker " << r << " (rank " << r << " of " << pids.size() << ") "
                << (WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                        : "exited with status " + std::to_string(WEXITSTATUS(status)))
                << (WIFSIGNALED(status) ? " before it could checkpoint" : "; its error is above") << "\n";
      ++failed;
    }
  }
  return failed ? 1 : stopped;
}

void attach_to_launcher() {
  const char* launcher = std::getenv("HAMGAN_LAUNCHER_PID");
  if (!launcher) return;
  catch_signal(SIGUSR1, on_launcher_death);
  prctl(PR_SET_PDEATHSIG, SIGUSR1);
  // Checked after PR_SET_PDEATHSIG: a launcher that dies after this check still stops the rank.
  if (getppid() != static_cast<pid_t>(std::atoll(launcher)))
    fail("environment variable HAMGAN_LAUNCHER_PID='", launcher, "': this process is a rank of `hamgan train --nproc` "
         "(the launcher, process ", launcher, ", sets it for its ranks), but that launcher is gone (or not this process's "
         "parent): run the command again without HAMGAN_LAUNCHER_PID in the environment");
}

}  // namespace hamgan
