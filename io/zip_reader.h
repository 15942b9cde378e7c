// Reads the members of a zip archive held in memory (numpy .npz files, torch.save and
// LibTorch checkpoints): stored and deflate members, zip64 extras. Every size and offset
// is checked against the buffer and every member's CRC-32 against its data, so a flipped
// byte anywhere in a member is an error that names the archive and the member.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace hamgan::io {

// The unsigned little-endian integer of `bytes` bytes at p (zip and .npy headers).
uint64_t little_endian(const uint8_t* p, int bytes);

using ZipMember = std::function<void(const std::string& name, const uint8_t* data, size_t size)>;

struct ZipLimits {
  uint64_t max_entries = uint64_t(1) << 20;
  // Bytes that all deflated members together may inflate to. Checked against each member's
  // declared size before its buffer is allocated, so a deflate bomb costs nothing.
  uint64_t max_inflated = std::numeric_limits<uint64_t>::max();
  // Appended to the error when max_inflated is exceeded: why this kind of archive has so little.
  std::string inflated_note;
};

// Calls `member(name, data, size)` for each member in central-directory order, after its
// CRC matched. `data` is valid during the call only; one member is inflated at a time.
void for_each_zip_member(const uint8_t* bytes, size_t size, const std::string& what, const ZipLimits& limits,
                         const ZipMember& member);
// More than `max_entries` members: error.
void for_each_zip_member(const std::vector<uint8_t>& bytes, const std::string& what, uint64_t max_entries,
                         const ZipMember& member);

// The first `n` bytes (fewer when the member is shorter) of the first stored (uncompressed)
// member of the zip archive `bytes` whose name ends with `name_suffix`; "" when `bytes` is not
// such an archive. Reads the central directory and that member only (a mapped checkpoint of
// gigabytes is not paged in), checks no CRC and never throws: it recognises a file, it does
// not read one.
std::string stored_member_prefix(const uint8_t* bytes, size_t size, const std::string& name_suffix, size_t n);

// Fails (naming `path` and the member) unless `path` is a zip archive whose members all
// match their CRC-32. Returns the number of members. The file is mapped, not read into memory.
uint64_t verify_zip_file(const std::string& path, uint64_t max_entries = uint64_t(1) << 20);

}  // namespace hamgan::io
