#include "io/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/error.h"

namespace hamgan::io {

DirLock::DirLock(const std::string& dir, const std::string& name) {
  const std::string path = (std::filesystem::path(dir) / name).string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path, ": cannot open the run lock: ", std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    char buf[32] = {};
    const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
    ::close(fd_);
    fd_ = -1;
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    if (e == EWOULDBLOCK)
      fail(dir, ": in use by another hamgan process (PID ", pid.empty() ? "unknown" : pid, ", lock ", path,
           "); wait for it to finish or stop it", name == ".lock" ? ", or choose another --out" : "");
    fail(path, ": cannot lock: ", std::strerror(e));
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  // The PID is informative only: the flock is the lock.
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    // A full disk must not stop training over a PID note.
  }
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock
}

}  // namespace hamgan::io
