#include "io/npz.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "io/torch_file.h"

namespace hamgan::npz {

namespace {

constexpr uint64_t kMaxArrayBytes = uint64_t(1) << 34;

uint64_t le(const uint8_t* p, int k) {
  uint64_t u = 0;
  for (int j = 0; j < k; ++j) u |= static_cast<uint64_t>(p[j]) << (8 * j);
  return u;
}

struct Span {
  const std::vector<uint8_t>& b;
  std::string what;
  const uint8_t* at(uint64_t off, uint64_t n, const char* thing) const {
    if (off > b.size() || n > b.size() - off)
      fail(what, ": ", thing, " at byte ", off, " (", n, " bytes) lies outside the file of ", b.size(), " bytes");
    return b.data() + off;
  }
};

// Parses "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }".
torch::Tensor parse_npy(const std::vector<uint8_t>& d, const std::string& what) {
  static const char magic[] = "\x93NUMPY";
  if (d.size() < 10 || std::memcmp(d.data(), magic, 6) != 0) fail(what, ": not a .npy array (bad magic)");
  const int major = d[6];
  size_t hlen, hstart;
  if (major == 1) hlen = le(&d[8], 2), hstart = 10;
  else if (major == 2 || major == 3) {
    if (d.size() < 12) fail(what, ": truncated .npy header");
    hlen = le(&d[8], 4), hstart = 12;
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

std::vector<uint8_t> inflate_raw(const uint8_t* src, uint64_t n, uint64_t out_n, const std::string& what) {
  // Deflate expands at most ~1032:1, so a larger declared size is a lie; checking it before
  // allocating keeps a tiny file from asking for gigabytes (found by fuzz_npz).
  if (out_n > kMaxArrayBytes || out_n > n * 1032 + 1024)
    fail(what, ": declared uncompressed size ", out_n, " is impossible for ", n, " deflate bytes");
  std::vector<uint8_t> out(out_n);
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) fail(what, ": zlib init failed");
  z.next_in = const_cast<uint8_t*>(src);
  z.avail_in = static_cast<uInt>(n);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out_n);
  const int rc = inflate(&z, Z_FINISH);
  const uint64_t produced = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != out_n)
    fail(what, ": deflate data is corrupt or does not give the declared ", out_n, " bytes");
  return out;
}

}  // namespace

std::map<std::string, torch::Tensor> read_bytes(const std::vector<uint8_t>& b, const std::string& what) {
  const Span f{b, what};
  // End of central directory: last 22+ bytes, signature 0x06054b50.
  if (b.size() < 22) fail(what, ": not a zip (.npz) file: too short");
  size_t eocd = std::string::npos;
  for (size_t k = b.size() - 22 + 1; k-- > 0 && b.size() - k <= 22 + 65535;)
    if (le(&b[k], 4) == 0x06054b50) { eocd = k; break; }
  if (eocd == std::string::npos) fail(what, ": not a zip (.npz) file: no end of central directory");
  uint64_t entries = le(&b[eocd + 10], 2), cd_off = le(&b[eocd + 16], 4);
  if (entries == 0xffff || cd_off == 0xffffffff) {  // zip64 end-of-central-directory locator
    if (eocd < 20 || le(&b[eocd - 20], 4) != 0x07064b50) fail(what, ": zip64 locator missing");
    const uint64_t z64 = le(&b[eocd - 20 + 8], 8);
    const uint8_t* p = f.at(z64, 56, "zip64 end of central directory");
    if (le(p, 4) != 0x06064b50) fail(what, ": bad zip64 end of central directory");
    entries = le(p + 32, 8);
    cd_off = le(p + 48, 8);
  }
  if (entries > 4096) fail(what, ": ", entries, " zip entries (too many)");
  std::map<std::string, torch::Tensor> out;
  uint64_t pos = cd_off;
  for (uint64_t e = 0; e < entries; ++e) {
    const uint8_t* c = f.at(pos, 46, "central directory entry");
    if (le(c, 4) != 0x02014b50) fail(what, ": bad central directory entry at byte ", pos);
    const int method = static_cast<int>(le(c + 10, 2));
    const uint32_t crc = static_cast<uint32_t>(le(c + 16, 4));
    uint64_t csize = le(c + 20, 4), usize = le(c + 24, 4);
    const uint64_t nlen = le(c + 28, 2), xlen = le(c + 30, 2), clen = le(c + 32, 2);
    uint64_t loff = le(c + 42, 4);
    const uint8_t* name_p = f.at(pos + 46, nlen + xlen + clen, "central directory names");
    std::string name(reinterpret_cast<const char*>(name_p), nlen);
    // zip64 extra (id 1): present fields are those stored as 0xffffffff, in this order.
    for (uint64_t x = 0; x + 4 <= xlen;) {
      const uint64_t id = le(name_p + nlen + x, 2), sz = le(name_p + nlen + x + 2, 2);
      if (x + 4 + sz > xlen) fail(what, ": ", name, ": malformed zip extra field");
      const uint8_t* q = name_p + nlen + x + 4;
      uint64_t used = 0;
      auto take = [&](uint64_t& v) {
        if (v != 0xffffffff) return;
        if (used + 8 > sz) fail(what, ": ", name, ": short zip64 extra field");
        v = le(q + used, 8);
        used += 8;
      };
      if (id == 1) take(usize), take(csize), take(loff);
      x += 4 + sz;
    }
    pos += 46 + nlen + xlen + clen;
    const uint8_t* l = f.at(loff, 30, "local header");
    if (le(l, 4) != 0x04034b50) fail(what, ": ", name, ": bad local header at byte ", loff);
    const uint64_t data_off = loff + 30 + le(l + 26, 2) + le(l + 28, 2);
    const uint8_t* data = f.at(data_off, csize, ("data of member '" + name + "'").c_str());
    const std::string member = what + ":" + name;
    std::vector<uint8_t> raw;
    if (method == 0) {
      if (csize != usize) fail(member, ": stored member with different sizes");
      raw.assign(data, data + csize);
    } else if (method == 8) {
      raw = inflate_raw(data, csize, usize, member);
    } else {
      fail(member, ": compression method ", method, " (only stored and deflate)");
    }
    if (static_cast<uint32_t>(crc32(0L, raw.data(), static_cast<uInt>(raw.size()))) != crc)
      fail(member, ": CRC mismatch");
    if (name.size() < 4 || name.substr(name.size() - 4) != ".npy") fail(member, ": member is not a .npy");
    const std::string key = name.substr(0, name.size() - 4);
    if (out.count(key)) fail(member, ": duplicate member");
    out[key] = parse_npy(raw, member);
  }
  return out;
}

std::map<std::string, torch::Tensor> read(const std::string& path) {
  return read_bytes(torch_file::read_file(path), path);
}

void write(const std::string& path, const std::map<std::string, torch::Tensor>& arrays) {
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
  std::ofstream f(path, std::ios::binary);
  if (!f) fail(path, ": cannot open for writing");
  f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  if (!f) fail(path, ": write failed");
}

}  // namespace hamgan::npz
