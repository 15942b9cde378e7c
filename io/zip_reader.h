// Reads the members of a zip archive held in memory (numpy .npz files, torch.save and
// LibTorch checkpoints): stored and deflate members, zip64 extras. Every size and offset
// is checked against the buffer and every member's CRC-32 against its data, so a flipped
// byte anywhere in a member is an error that names the archive and the member.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hamgan::io {

// The unsigned little-endian integer of `bytes` bytes at p (zip and .npy headers).
uint64_t little_endian(const uint8_t* p, int bytes);

// Calls `member(name, data, size)` for each member in central-directory order, after its
// CRC matched. `data` is valid during the call only. More than `max_entries` members: error.
void for_each_zip_member(const std::vector<uint8_t>& bytes, const std::string& what, uint64_t max_entries,
                         const std::function<void(const std::string&, const uint8_t*, size_t)>& member);

// Fails (naming `path` and the member) unless `path` is a zip archive whose members all
// match their CRC-32. Returns the number of members.
uint64_t verify_zip_file(const std::string& path, uint64_t max_entries = uint64_t(1) << 20);

}  // namespace hamgan::io
