#include "io/zip_reader.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "io/mapped_file.h"

namespace hamgan::io {

uint64_t little_endian(const uint8_t* p, int bytes) {
  uint64_t u = 0;
  for (int j = 0; j < bytes; ++j) u |= static_cast<uint64_t>(p[j]) << (8 * j);
  return u;
}

namespace {

uint64_t le(const uint8_t* p, int k) { return little_endian(p, k); }

constexpr uint64_t kMaxMemberBytes = uint64_t(1) << 34;

struct Span {
  const uint8_t* p;
  uint64_t size;
  std::string what;
  const uint8_t* at(uint64_t off, uint64_t n, const std::string& thing) const {
    if (off > size || n > size - off)
      fail(what, ": ", thing, " at byte ", off, " (", n, " bytes) lies outside the file of ", size, " bytes");
    return p + off;
  }
};

std::vector<uint8_t> inflate_raw(const uint8_t* src, uint64_t n, uint64_t out_n, const std::string& what) {
  // Deflate expands at most ~1032:1, so a larger declared size is a lie; checking it before
  // allocating keeps a tiny file from asking for gigabytes (found by fuzz_npz).
  if (out_n > kMaxMemberBytes || out_n > n * 1032 + 1024)
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

uint32_t crc_of(const uint8_t* p, uint64_t n) {
  uLong c = crc32(0L, Z_NULL, 0);
  while (n > 0) {  // zlib takes uInt lengths
    const uInt k = static_cast<uInt>(std::min<uint64_t>(n, 1u << 30));
    c = crc32(c, p, k);
    p += k;
    n -= k;
  }
  return static_cast<uint32_t>(c);
}

}  // namespace

void for_each_zip_member(const uint8_t* b, size_t size, const std::string& what, const ZipLimits& limits,
                         const ZipMember& member) {
  const Span f{b, size, what};
  // End of central directory: last 22+ bytes, signature 0x06054b50.
  if (size < 22) fail(what, ": not a zip archive: too short");
  size_t eocd = std::string::npos;
  for (size_t k = size - 22 + 1; k-- > 0 && size - k <= 22 + 65535;)
    if (le(&b[k], 4) == 0x06054b50) { eocd = k; break; }
  if (eocd == std::string::npos) fail(what, ": not a zip archive: no end of central directory");
  uint64_t entries = le(&b[eocd + 10], 2), cd_off = le(&b[eocd + 16], 4);
  if (entries == 0xffff || cd_off == 0xffffffff) {  // zip64 end-of-central-directory locator
    if (eocd < 20 || le(&b[eocd - 20], 4) != 0x07064b50) fail(what, ": zip64 locator missing");
    const uint64_t z64 = le(&b[eocd - 20 + 8], 8);
    const uint8_t* p = f.at(z64, 56, "zip64 end of central directory");
    if (le(p, 4) != 0x06064b50) fail(what, ": bad zip64 end of central directory");
    entries = le(p + 32, 8);
    cd_off = le(p + 48, 8);
  }
  if (entries > limits.max_entries)
    fail(what, ": ", entries, " zip entries (at most ", limits.max_entries, " expected)");
  uint64_t pos = cd_off, inflated_total = 0;
  for (uint64_t e = 0; e < entries; ++e) {
    const uint8_t* c = f.at(pos, 46, "central directory entry");
    if (le(c, 4) != 0x02014b50) fail(what, ": bad central directory entry at byte ", pos);
    const int method = static_cast<int>(le(c + 10, 2));
    const uint32_t crc = static_cast<uint32_t>(le(c + 16, 4));
    uint64_t csize = le(c + 20, 4), usize = le(c + 24, 4);
    const uint64_t nlen = le(c + 28, 2), xlen = le(c + 30, 2), clen = le(c + 32, 2);
    uint64_t loff = le(c + 42, 4);
    const uint8_t* name_p = f.at(pos + 46, nlen + xlen + clen, "central directory names");
    const std::string name(reinterpret_cast<const char*>(name_p), nlen);
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
    const uint8_t* data = f.at(data_off, csize, "data of member '" + name + "'");
    const std::string where = what + ":" + name;
    std::vector<uint8_t> inflated;
    if (method == 0) {
      if (csize != usize) fail(where, ": stored member with different sizes");
    } else if (method == 8) {
      if (usize > limits.max_inflated - inflated_total)
        fail(where, ": deflated member declares ", usize, " bytes once inflated (", csize, " bytes compressed; ",
             inflated_total, " inflated before it); at most ", limits.max_inflated,
             " inflated bytes in all are accepted here", limits.inflated_note);
      inflated_total += usize;
      inflated = inflate_raw(data, csize, usize, where);
      data = inflated.data();
    } else {
      fail(where, ": compression method ", method, " (only stored and deflate)");
    }
    if (crc_of(data, usize) != crc)
      fail(where, ": CRC mismatch (the file is damaged: its bytes changed after it was written)");
    member(name, data, static_cast<size_t>(usize));
  }
}

void for_each_zip_member(const std::vector<uint8_t>& b, const std::string& what, uint64_t max_entries,
                         const ZipMember& member) {
  ZipLimits limits;
  limits.max_entries = max_entries;
  for_each_zip_member(b.data(), b.size(), what, limits, member);
}

std::string stored_member_prefix(const uint8_t* b, size_t size, const std::string& name_suffix, size_t n) {
  if (size < 22) return "";
  size_t eocd = std::string::npos;
  for (size_t k = size - 22 + 1; k-- > 0 && size - k <= 22 + 65535;)
    if (le(&b[k], 4) == 0x06054b50) { eocd = k; break; }
  if (eocd == std::string::npos) return "";
  // Central directories past 4 GB (zip64) are not looked into: the files this recognises are smaller.
  const uint64_t entries = le(&b[eocd + 10], 2), cd_off = le(&b[eocd + 16], 4);
  uint64_t pos = cd_off;
  for (uint64_t e = 0; e < entries; ++e) {
    if (pos > size || size - pos < 46 || le(&b[pos], 4) != 0x02014b50) return "";
    const uint8_t* c = &b[pos];
    const uint64_t method = le(c + 10, 2), csize = le(c + 20, 4);
    const uint64_t nlen = le(c + 28, 2), xlen = le(c + 30, 2), clen = le(c + 32, 2), loff = le(c + 42, 4);
    if (size - pos - 46 < nlen) return "";
    const std::string name(reinterpret_cast<const char*>(c + 46), nlen);
    pos += 46 + nlen + xlen + clen;
    if (name.size() < name_suffix.size() || name.compare(name.size() - name_suffix.size(), name_suffix.size(), name_suffix) != 0)
      continue;
    if (method != 0 || loff > size || size - loff < 30 || le(&b[loff], 4) != 0x04034b50) return "";
    const uint64_t data_off = loff + 30 + le(&b[loff + 26], 2) + le(&b[loff + 28], 2);
    if (data_off > size || size - data_off < csize) return "";
    return std::string(reinterpret_cast<const char*>(&b[data_off]), static_cast<size_t>(std::min<uint64_t>(csize, n)));
  }
  return "";
}

uint64_t verify_zip_file(const std::string& path, uint64_t max_entries) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, ": expected a file");
  // Mapped: a checkpoint of gigabytes is checked without a copy of it on the heap.
  const MappedFile file(path, /*writable=*/false);
  ZipLimits limits;
  limits.max_entries = max_entries;
  uint64_t n = 0;
  for_each_zip_member(file.data(), file.size(), path, limits, [&](const std::string&, const uint8_t*, size_t) { ++n; });
  return n;
}

}  // namespace hamgan::io
