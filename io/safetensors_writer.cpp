#include "io/safetensors_writer.h"

#include <cstdio>
#include <cstring>
#include <set>

#include "core/error.h"
#include "io/atomic_file.h"

namespace hamgan::io {

namespace {

const char* dtype_name(torch::ScalarType t) {
  switch (t) {
    case torch::kDouble: return "F64";
    case torch::kFloat: return "F32";
    case torch::kHalf: return "F16";
    case torch::kBFloat16: return "BF16";
    case torch::kLong: return "I64";
    case torch::kInt: return "I32";
    case torch::kShort: return "I16";
    case torch::kChar: return "I8";
    case torch::kByte: return "U8";
    case torch::kBool: return "BOOL";
    default: return nullptr;
  }
}

void put_u64_le(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool little_endian_host() {
  const uint16_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

}  // namespace

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string safetensors_bytes(const NamedTensors& tensors,
                              const std::map<std::string, std::string>& metadata) {
  if (!little_endian_host()) fail("safetensors: writing needs a little-endian host");
  std::set<std::string> seen;
  std::vector<torch::Tensor> data;
  std::string header = "{";
  uint64_t offset = 0;
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      header += (first ? "" : ",") + json_string(k) + ":" + json_string(v);
      first = false;
    }
    header += "}";
  }
  for (const auto& [name, t] : tensors) {
    if (name.empty() || name == "__metadata__")
      fail("safetensors: tensor name '", name, "' is reserved or empty");
    if (!seen.insert(name).second) fail("safetensors: tensor name '", name, "' appears twice");
    const char* dt = dtype_name(t.scalar_type());
    if (!dt) fail("safetensors: tensor '", name, "' has dtype ", t.scalar_type(), ", which the format has no name for");
    const torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    const uint64_t bytes = static_cast<uint64_t>(c.numel()) * c.element_size();
    std::string shape;
    for (int64_t d : c.sizes()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    header += (header.size() > 1 ? "," : "") + json_string(name) + ":{\"dtype\":\"" + dt + "\",\"shape\":[" +
              shape + "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
    data.push_back(c);
  }
  header += "}";
  // Pad with spaces (JSON whitespace) so the data starts 8-byte aligned, as the reference writer does.
  while (header.size() % 8) header += ' ';
  std::string out;
  out.reserve(8 + header.size() + offset);
  put_u64_le(out, header.size());
  out += header;
  for (const auto& c : data)
    out.append(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()) * c.element_size());
  return out;
}

const OutputKind& safetensors_output() {
  static const OutputKind k{"a safetensors file", [](std::string_view head) {
                              if (head.size() < 9) return false;
                              uint64_t n = 0;
                              for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head[i]);
                              return n >= 2 && n < (uint64_t{1} << 32) && head[8] == '{';
                            }};
  return k;
}

void write_safetensors(const std::string& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata, const std::string& option) {
  check_output_path(path, safetensors_output(), option);
  write_file_atomically(path, safetensors_bytes(tensors, metadata));
}

}  // namespace hamgan::io
