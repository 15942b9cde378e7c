#include "io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

#include "core/error.h"

namespace hamgan::io {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_fail_error{0};
std::atomic<uint64_t> g_fail_after{0};

// ::write with the injected failure: the bytes up to the budget are written, then `error`.
ssize_t checked_write(int fd, const char* p, size_t n) {
  const int e = g_fail_error.load();
  if (e != 0) {
    const uint64_t left = g_fail_after.load();
    if (left == 0) {
      errno = e;
      return -1;
    }
    if (n > left) n = static_cast<size_t>(left);
  }
  const ssize_t w = ::write(fd, p, n);
  if (e != 0 && w > 0) g_fail_after -= static_cast<uint64_t>(w);
  return w;
}

// Writes all of `bytes`; returns 0 or the errno of the failure.
int write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = checked_write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

void fsync_dir(const fs::path& file) {
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename itself is already atomic
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string temporary_name(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

bool is_temporary_name(const std::string& filename) {
  static const std::regex re(R"(.+\.tmp\.[0-9]+)");
  return std::regex_match(filename, re);
}

bool is_stale_temporary_of(const std::string& filename, const std::string& final_name) {
  const std::string prefix = final_name + ".tmp.";
  if (filename.size() <= prefix.size() || filename.compare(0, prefix.size(), prefix) != 0) return false;
  const std::string digits = filename.substr(prefix.size());
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  const pid_t pid = static_cast<pid_t>(std::stol(digits));
  // ESRCH: no such process. EPERM means one lives (another user's): not ours to remove.
  return pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH;
}

std::string write_error_text(int err) {
  std::string s = std::strerror(err);
  if (err == EFBIG) s += ": the file-size limit (ulimit -f) is reached";
  else if (err == ENOSPC) s += ": the disk is full";
  else if (err == EDQUOT) s += ": the disk quota is used up";
  return s;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  const std::string tmp = temporary_name(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, ": cannot create ", tmp, ": ", write_error_text(errno));
  int err = write_all(fd, bytes);
  const char* step = "write";
  if (!err && ::fsync(fd) != 0) err = errno, step = "fsync";
  if (::close(fd) != 0 && !err) err = errno, step = "close";
  std::error_code ec;
  if (err) {
    fs::remove(tmp, ec);  // a partial file must not keep the disk full
    fail(path, ": ", step, " failed: ", write_error_text(err), " (", bytes.size(),
         " bytes to write; the file is unchanged and no temporary is left)");
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    fail(path, ": cannot rename ", tmp, " into place: ", ec.message());
  }
  fsync_dir(path);
}

void append_to_file(const std::string& path, std::string_view bytes, bool sync) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, ": cannot open for appending: ", write_error_text(errno));
  struct stat st {};
  const off_t before = ::fstat(fd, &st) == 0 ? st.st_size : -1;
  int err = 0;
  const ssize_t n = checked_write(fd, bytes.data(), bytes.size());
  if (n < 0) err = errno;
  else if (static_cast<size_t>(n) != bytes.size()) {
    // A short write: the next one completes the line or says why (EFBIG at the file-size
    // limit, ENOSPC on a full disk).
    const size_t rest = bytes.size() - static_cast<size_t>(n);
    const ssize_t m = checked_write(fd, bytes.data() + n, rest);
    if (m < 0) err = errno;
    else if (static_cast<size_t>(m) != rest) err = ENOSPC;
  }
  if (!err && sync && ::fsync(fd) != 0) err = errno;
  if (err && n > 0 && before >= 0) (void)::ftruncate(fd, before);  // no half line left behind
  if (::close(fd) != 0 && !err) err = errno;
  if (err) fail(path, ": cannot append ", bytes.size(), " bytes: ", write_error_text(err));
}

void inject_write_failure(int error, uint64_t after_bytes) {
  g_fail_after = after_bytes;
  g_fail_error = error;
}

}  // namespace hamgan::io
