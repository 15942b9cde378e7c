// An exclusive lock on a directory that one process writes (a training run's --out): flock
// on DIR/.lock, which holds the owner's PID. A second process fails at once, naming the
// holder, instead of interleaving checkpoints and metrics with it. The kernel drops the
// lock when its holder exits, however it exits (kill -9 included), so it is never stale.
#pragma once
#include <string>

namespace hamgan::io {

class DirLock {
 public:
  // Throws hamgan::Error naming the directory and the holder's PID when it is taken. `name`:
  // the lock file (one directory may have several independent writers, e.g. train and fid --run).
  explicit DirLock(const std::string& dir, const std::string& name = ".lock");
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace hamgan::io
