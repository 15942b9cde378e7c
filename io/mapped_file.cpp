#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/regular_file.h"

namespace hamgan {

MappedFile::MappedFile(const std::string& path, bool writable, size_t size) : path_(path) {
  if (!writable) io::require_regular_file(path, "a file to map");
  fd_ = ::open(path.c_str(), writable ? (O_RDWR | O_CREAT) : O_RDONLY, 0644);
  if (fd_ < 0) fail(path, ": cannot open: ", std::strerror(errno));
  if (writable && size > 0 && ::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
    const int e = errno;
    ::close(fd_);
    fail(path, ": cannot resize to ", size, " bytes: ", io::write_error_text(e));
  }
  // The blocks are reserved now: a store into a sparse mapping on a full disk is a SIGBUS, not
  // an error.
  if (writable && size > 0)
    if (const int e = ::posix_fallocate(fd_, 0, static_cast<off_t>(size)); e != 0) {
      ::close(fd_);
      fail(path, ": cannot reserve ", size, " bytes on its disk: ", io::write_error_text(e));
    }
  struct stat st;
  ::fstat(fd_, &st);
  size_ = static_cast<size_t>(st.st_size);
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, writable ? (PROT_READ | PROT_WRITE) : PROT_READ, MAP_SHARED,
                   fd_, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    ::close(fd_);
    fail(path, ": cannot mmap: ", std::strerror(e));
  }
  data_ = static_cast<uint8_t*>(p);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
}

void MappedFile::sync() {
  if (data_ && ::msync(data_, size_, MS_SYNC) != 0) fail(path_, ": msync: ", std::strerror(errno));
  if (::fsync(fd_) != 0) fail(path_, ": fsync: ", std::strerror(errno));
}

}  // namespace hamgan
