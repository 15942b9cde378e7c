#include "io/npz.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/output_path.h"
#include "io/torch_file.h"
#include "io/zip_reader.h"

namespace hamgan::npz {

namespace {

constexpr uint64_t kMaxArrayBytes = uint64_t(1) << 34;

using io::little_endian;

// Parses "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }".
torch::Tensor parse_npy(const std::vector<uint8_t>& d, const std::string& what) {
  static const char magic[] = "\x93NUMPY";
  if (d.size() < 10 || std::memcmp(d.data(), magic, 6) != 0) fail(what, ": not a .npy array (bad magic)");
  const int major = d[6];
  size_t hlen, hstart;
  if (major == 1) hlen = little_endian(&d[8], 2), hstart = 10;
  else if (major == 2 || major == 3) {
    if (d.size() < 12) fail(what, ": truncated .npy header");
    hlen = little_endian(&d[8], 4), hstart = 12;
  } else fail(what, ": unsupported .npy version ", major);
  if (hlen > d.size() - hstart) fail(what, ": .npy header of ", hlen, " bytes exceeds the member");
  const std::string h(reinterpret_cast<const char*>(&d[hstart]), hlen);
  auto field = [&](const std::string& key) -> std::string {
    const size_t k = h.find("'" + key + "':");
    if (k == std::string::npos) fail(what, ": .npy header lacks '", key, "'");
    size_t s = k + key.size() + 3;
    while (s < h.size() && h[s] == ' ') ++s;
    size_t e = s;
    if (s < h.size() && h[s] == '(') e = h.find(')', s);
    else if (s < h.size() && h[s] == '\'') e = h.find('\'', s + 1);
    else while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
    if (e == std::string::npos || e >= h.size()) fail(what, ": malformed .npy header field '", key, "'");
    return h.substr(s, e - s + (h[s] == '(' || h[s] == '\'' ? 1 : 0));
  };
  const std::string descr = field("descr"), fo = field("fortran_order"), shape_s = field("shape");
  torch::ScalarType dt;
  if (descr == "'<f8'") dt = torch::kDouble;
  else if (descr == "'<f4'") dt = torch::kFloat;
  else if (descr == "'<f2'") dt = torch::kHalf;
  else fail(what, ": dtype ", descr, " is not a little-endian float (<f2, <f4, <f8)");
  bool fortran;
  if (fo == "False") fortran = false;
  else if (fo == "True") fortran = true;
  else fail(what, ": fortran_order is '", fo, "'");
  if (shape_s.size() < 2 || shape_s.front() != '(' || shape_s.back() != ')') fail(what, ": malformed shape ", shape_s);
  std::vector<int64_t> shape;
  uint64_t numel = 1;
  std::stringstream ss(shape_s.substr(1, shape_s.size() - 2));
  std::string tok;
  while (std::getline(ss, tok, ',')) {
    const size_t a = tok.find_first_not_of(' ');
    if (a == std::string::npos) continue;
    tok = tok.substr(a, tok.find_last_not_of(' ') - a + 1);
    if (tok.empty() || tok.size() > 12 || tok.find_first_not_of("0123456789") != std::string::npos)
      fail(what, ": malformed shape ", shape_s);
    const int64_t n = std::stoll(tok);
    shape.push_back(n);
    numel *= static_cast<uint64_t>(n);
    if (numel > kMaxArrayBytes) fail(what, ": shape ", shape_s, " too large");
  }
  if (shape.size() > 8) fail(what, ": more than 8 dimensions");
  const size_t es = c10::elementSize(dt);
  const size_t body = hstart + hlen;
  if (d.size() - body != numel * es)
    fail(what, ": data holds ", d.size() - body, " bytes, shape ", shape_s, " of ", descr, " needs ", numel * es);
  std::vector<int64_t> store_shape(shape);
  if (fortran) std::reverse(store_shape.begin(), store_shape.end());
  torch::Tensor t = torch::empty(store_shape, torch::TensorOptions().dtype(dt));
  if (numel) std::memcpy(t.data_ptr(), &d[body], numel * es);
  if (fortran && shape.size() > 1) {
    std::vector<int64_t> perm;
    for (int64_t k = static_cast<int64_t>(shape.size()) - 1; k >= 0; --k) perm.push_back(k);
    t = t.permute(perm).contiguous();
  }
  return t.to(torch::kDouble);
}

}  // namespace

std::map<std::string, torch::Tensor> read_bytes(const std::vector<uint8_t>& b, const std::string& what) {
  std::map<std::string, torch::Tensor> out;
  io::for_each_zip_member(b, what, 4096, [&](const std::string& name, const uint8_t* data, size_t n) {
    const std::string member = what + ":" + name;
    if (name.size() < 4 || name.substr(name.size() - 4) != ".npy") fail(member, ": member is not a .npy");
    const std::string key = name.substr(0, name.size() - 4);
    if (out.count(key)) fail(member, ": duplicate member");
    out[key] = parse_npy(std::vector<uint8_t>(data, data + n), member);
  });
  return out;
}

std::map<std::string, torch::Tensor> read(const std::string& path) {
  return read_bytes(torch_file::read_file(path), path);
}

void write(const std::string& path, const std::map<std::string, torch::Tensor>& arrays) {
  io::check_output_path(path, io::npz_output());  // replaces an earlier .npz only, never another file
  std::vector<uint8_t> out, cd;
  auto put = [](std::vector<uint8_t>& v, uint64_t x, int k) {
    for (int j = 0; j < k; ++j) v.push_back(static_cast<uint8_t>(x >> (8 * j)));
  };
  for (const auto& [key, t0] : arrays) {
    const torch::Tensor t = t0.detach().to(torch::kCPU, torch::kDouble).contiguous();
    std::string shape = "(";
    for (int64_t s : t.sizes()) shape += std::to_string(s) + ", ";
    if (t.dim() > 1) shape.resize(shape.size() - 2);
    else if (t.dim() == 1) shape.resize(shape.size() - 1);
    shape += ")";
    std::string hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + hdr.size() + 1) % 64) hdr += ' ';
    hdr += '\n';
    std::vector<uint8_t> npy = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    put(npy, hdr.size(), 2);
    npy.insert(npy.end(), hdr.begin(), hdr.end());
    const auto* p = static_cast<const uint8_t*>(t.data_ptr());
    npy.insert(npy.end(), p, p + t.numel() * 8);
    if (npy.size() >= 0xffffffffu) fail(path, ": array '", key, "' too large for this writer");
    const std::string name = key + ".npy";
    const uint32_t crc = static_cast<uint32_t>(crc32(0L, npy.data(), static_cast<uInt>(npy.size())));
    const uint64_t loff = out.size();
    put(out, 0x04034b50, 4), put(out, 20, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0x21, 2);
    put(out, crc, 4), put(out, npy.size(), 4), put(out, npy.size(), 4), put(out, name.size(), 2), put(out, 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), npy.begin(), npy.end());
    put(cd, 0x02014b50, 4), put(cd, 20, 2), put(cd, 20, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2);
    put(cd, 0x21, 2), put(cd, crc, 4), put(cd, npy.size(), 4), put(cd, npy.size(), 4), put(cd, name.size(), 2);
    put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 4), put(cd, loff, 4);
    cd.insert(cd.end(), name.begin(), name.end());
  }
  const uint64_t cd_off = out.size();
  out.insert(out.end(), cd.begin(), cd.end());
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2), put(out, arrays.size(), 2), put(out, arrays.size(), 2);
  put(out, cd.size(), 4), put(out, cd_off, 4), put(out, 0, 2);
  io::write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(out.data()), out.size()));
}

}  // namespace hamgan::npz
