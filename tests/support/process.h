// Child processes for multi-process and CLI tests: spawn with extra environment, wait with
// a time bound (a hung child is killed, never left behind), and this test binary
// re-launched as the ranks of a loopback process group.
#pragma once
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace hamgan::test {

// Starts argv[0] with argv and this environment plus `extra_env` ("KEY=VALUE" entries
// replace same-named ones). stdout and stderr go to `log_path` when it is not empty.
// Returns the pid; throws std::runtime_error when it cannot start.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
            const std::string& log_path = "");

// Waits up to timeout_s for pid. Returns the wait status, or -1 after killing (SIGKILL) and
// reaping a child that did not finish in time.
int wait_for(pid_t pid, double timeout_s);

// Kills (SIGKILL) and reaps the child when it goes out of scope, unless release()d: a
// failing ASSERT never leaves a stray process.
class ChildGuard {
 public:
  explicit ChildGuard(pid_t pid) : pid_(pid) {}
  ~ChildGuard();
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  pid_t pid() const { return pid_; }
  // The child was reaped (e.g. by wait_for): nothing to kill.
  void release() { pid_ = -1; }

 private:
  pid_t pid_;
};

// Runs this test binary (/proc/self/exe) as ranks 0..world-1 of a Gloo group on loopback:
// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, plus `extra_env`. Each rank's output goes to
// `log_prefix`<rank>.log. Returns "" when every rank exited 0 within timeout_s, else what
// went wrong, with the logs.
std::string run_ranks(int world, const std::vector<std::string>& extra_env,
                      const std::string& log_prefix, double timeout_s);

// main() of a test binary that is also its own worker: runs `worker` (exit status 1 with
// the message on an exception) when the environment has `worker_env`, else the tests.
int test_main(int argc, char** argv, const char* worker_env, const std::function<int()>& worker);

// Runs f in a forked child (as user `nobody` when `drop_root` and we are root, so file modes
// bind) and returns its exit status, 128 + the signal when killed: the parent's checks stay in
// the parent.
int in_child(const std::function<int()>& f, bool drop_root);

// The pid of a process whose environment (/proc/PID/environ) holds every one of `entries`
// ("KEY=VALUE"), or -1.
pid_t find_process(const std::vector<std::string>& entries);

// The whole file, or "" when unreadable.
std::string read_text(const std::string& path);

// The variable CTest sets for a test (HAMGAN_BINARY_DIR, HAMGAN_SOURCE_DIR, ...); throws naming
// it when unset or empty (the test was run outside ctest).
std::string ctest_env(const char* name);

}  // namespace hamgan::test
