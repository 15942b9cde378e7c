// The safetensors format (huggingface/safetensors, "Format" in its README): an 8-byte
// little-endian unsigned header length N, then N bytes of UTF-8 JSON
//   {"<name>": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"<key>": "<string value>", ...}}
// padded with spaces to a multiple of 8, then the tensors' raw little-endian bytes, each at its
// [begin, end) relative to the end of the header, contiguous and in header order. No code runs
// on load (unlike a pickle), and every reader (safetensors.torch.load_file, safe_open) maps it.
#pragma once
#include <torch/torch.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "io/output_path.h"

namespace hamgan::io {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

// The file's bytes. Tensors are copied to the CPU, row-major; dtypes F64, F32, F16, BF16, I64,
// I32, I16, I8, U8 and BOOL. Names must be unique, non-empty and not "__metadata__".
std::string safetensors_bytes(const NamedTensors& tensors,
                              const std::map<std::string, std::string>& metadata = {});

// Writes `path` atomically under io/output_path.h's rule (an earlier safetensors file is
// replaced; anything else refused, naming `option`).
void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata = {},
                       const std::string& option = "");

// A safetensors file: a header length that fits the 8-byte prefix, then a JSON object.
const OutputKind& safetensors_output();

// `s` as a JSON string literal, quotes included (RFC 8259 Sec. 7: ", \ and control
// characters escaped; other UTF-8 passed through).
std::string json_string(const std::string& s);

}  // namespace hamgan::io
