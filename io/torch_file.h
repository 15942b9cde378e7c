// Reading torch.save'd state dicts in C++ without Python: the legacy (non-zip) format that
// pytorch-fid's Inception weights use, and the zip format (torch >= 1.6). Both go through the
// restricted pickle reader; storages are bounds-checked against the file. And checking a
// TorchScript archive (LibTorch's checkpoints) before LibTorch's own reader trusts it.
#pragma once
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "core/state_dict.h"
#include "io/pickle_reader.h"
#include "io/zip_reader.h"

namespace hamgan::torch_file {

// The keys and tensor descriptors of a state dict, in file order, before any storage is read.
struct Index {
  enum Format { Legacy, Zip } format = Legacy;
  std::vector<std::pair<std::string, pickle::TensorRef>> tensors;
  size_t storages_begin = 0;  // legacy: byte where the raw storages start
};

// Parses the header and object pickle (and, legacy, the storage-key list). `what` names the
// source in errors.
Index read_index(const std::vector<uint8_t>& bytes, const std::string& what);

// The whole state dict: every str -> tensor entry (other values are an error).
TensorMap load(const std::string& path);
TensorMap load_bytes(const std::vector<uint8_t>& bytes, const std::string& what);

// Legacy-format parsing from memory only (no zip): the fuzz target's entry point.
TensorMap load_legacy(const std::vector<uint8_t>& bytes, const std::string& what);

std::vector<uint8_t> read_file(const std::string& path);

// A TorchScript archive as LibTorch's serialize::OutputArchive and torch.jit.save write it,
// checked for what LibTorch's reader takes on trust, before that reader runs: LibTorch makes
// each storage as large as its pickle declares over a record of whatever length, and each
// tensor at whatever offset, size and stride the pickle gives, so a crafted file reads memory
// it does not own (garbage weights, or a crash). Checked here, against the file: every member
// inside it and matching its CRC-32 (`limits` bounds what deflated members may inflate to),
// no member name twice, every storage that data.pkl or constants.pkl declares backed by a
// record of exactly its bytes, every tensor view inside its storage and no larger than it.
// The file is mapped, not copied. Errors name `path`, the member and what was expected.
// Returns the number of members.
uint64_t verify_script_archive(const std::string& path, const io::ZipLimits& limits);
// The same on bytes in memory (`path` names them in errors): a fuzz target's entry point.
uint64_t verify_script_archive(const uint8_t* bytes, size_t size, const std::string& path, const io::ZipLimits& limits);

}  // namespace hamgan::torch_file
