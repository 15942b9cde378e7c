// A file's identity: device, inode, modification time and size. A file rewritten (written to a
// temporary and renamed over, as checkpoints are) has another, even at the same path.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace hamgan::io {

struct FileId {
  uint64_t dev = 0, ino = 0;
  int64_t mtime_ns = 0, size = 0;
  bool operator==(const FileId& o) const {
    return dev == o.dev && ino == o.ino && mtime_ns == o.mtime_ns && size == o.size;
  }
};

// nullopt when the file cannot be stat'ed.
std::optional<FileId> file_id(const std::string& path);

}  // namespace hamgan::io
