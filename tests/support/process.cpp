#include "support/process.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <fstream>
#include <sstream>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <thread>

#include "gan/train/distributed.h"

extern "C" char** environ;

namespace hamgan::test {

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
            const std::string& log_path) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    bool replaced = false;
    for (const auto& x : extra_env)
      replaced |= v.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    if (!replaced) env.push_back(v);
  }
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<std::string> args = argv;
  std::vector<char*> av, ev;
  for (auto& a : args) av.push_back(a.data());
  av.push_back(nullptr);
  for (auto& e : env) ev.push_back(e.data());
  ev.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0].c_str(), &fa, nullptr, av.data(), ev.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
  return pid;
}

int wait_for(pid_t pid, double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (std::chrono::steady_clock::now() < end) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

ChildGuard::~ChildGuard() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
}

int in_child(const std::function<int()>& f, bool drop_root) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (drop_root && geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(90);
    _exit(f());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

pid_t find_process(const std::vector<std::string>& entries) {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "environ", std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bool all = !env.empty();
    for (const auto& x : entries) all = all && env.find(std::string(1, '\0') + x + '\0') != std::string::npos;
    if (all) return static_cast<pid_t>(std::stol(name));
  }
  return -1;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string ctest_env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) throw std::runtime_error(std::string(name) + " is not set: run through ctest");
  return v;
}

std::string run_ranks(int world, const std::vector<std::string>& extra_env,
                      const std::string& log_prefix, double timeout_s) {
  const int port = hamgan::free_loopback_port();
  std::vector<std::unique_ptr<ChildGuard>> kids;
  for (int r = 0; r < world; ++r) {
    std::vector<std::string> env = extra_env;
    env.push_back("RANK=" + std::to_string(r));
    env.push_back("WORLD_SIZE=" + std::to_string(world));
    env.push_back("MASTER_ADDR=127.0.0.1");
    env.push_back("MASTER_PORT=" + std::to_string(port));
    kids.push_back(std::make_unique<ChildGuard>(
        spawn({"/proc/self/exe"}, env, log_prefix + std::to_string(r) + ".log")));
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string why;
  for (int r = 0; r < world; ++r) {
    const double left =
        std::chrono::duration<double>(end - std::chrono::steady_clock::now()).count();
    const int status = wait_for(kids[r]->pid(), std::max(left, 0.0));
    kids[r]->release();
    if (status == -1)
      why += "rank " + std::to_string(r) + " timed out after " + std::to_string(timeout_s) + " s\n";
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      why += "rank " + std::to_string(r) + " failed (wait status " + std::to_string(status) + ")\n";
  }
  if (!why.empty())
    for (int r = 0; r < world; ++r)
      why += "--- rank " + std::to_string(r) + " log:\n" +
             read_text(log_prefix + std::to_string(r) + ".log");
  return why;
}

int test_main(int argc, char** argv, const char* worker_env, const std::function<int()>& worker) {
  if (std::getenv(worker_env)) {
    try {
      return worker();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "worker: %s\n", e.what());
      return 1;
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

}  // namespace hamgan::test
