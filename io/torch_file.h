// Reading torch.save'd state dicts in C++ without Python: the legacy (non-zip) format that
// pytorch-fid's Inception weights use, and the zip format (torch >= 1.6). Both go through the
// restricted pickle reader; storages are bounds-checked against the file.
#pragma once
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "core/state_dict.h"
#include "io/pickle_reader.h"

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

}  // namespace hamgan::torch_file
