// A file mapped into memory (read-only, or read-write for `prepare`); unmapped on destruction.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace hamgan {

class MappedFile {
 public:
  // writable: opens read-write and, when size > 0, resizes the file to `size` and reserves its
  // blocks first (a full disk: hamgan::Error here, never a SIGBUS later).
  MappedFile(const std::string& path, bool writable, size_t size = 0);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  void sync();  // msync + fsync

 private:
  std::string path_;
  int fd_ = -1;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace hamgan
