// Files hamgan reads whole or maps (weights, checkpoints, packed data, statistics) must be
// regular files: opening a FIFO blocks until a writer comes, which may be never, and a device
// or socket is no file of ours.
#pragma once
#include <string>

namespace hamgan::io {

// Error naming `path` and what it is (a FIFO, a device, a socket) when it exists and is not a
// regular file (a symlink to one is one); `what`: what was expected ("a weight file"). A
// missing path or a directory is left to the caller's own message.
void require_regular_file(const std::string& path, const std::string& what);

}  // namespace hamgan::io
