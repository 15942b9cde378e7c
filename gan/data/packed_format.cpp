#include <cstring>

#include "core/error.h"
#include "gan/data/packed.h"

namespace hamgan {

namespace {

constexpr uint64_t P1 = 11400714785074694791ULL, P2 = 14029467366897019727ULL,
                   P3 = 1609587929392839161ULL, P4 = 9650029242287828579ULL,
                   P5 = 2870177450012600261ULL;
inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t round64(uint64_t acc, uint64_t v) { return rotl(acc + v * P2, 31) * P1; }
inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

template <typename T>
void put(std::vector<uint8_t>& b, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  b.insert(b.end(), p, p + sizeof(T));
}
template <typename T>
T get_at(const uint8_t* p, size_t off) {
  T v;
  std::memcpy(&v, p + off, sizeof(T));
  return v;
}
size_t align(size_t n, size_t a) { return (n + a - 1) / a * a; }

}  // namespace

// xxHash64-style: four independent lanes so it runs at memory speed.
uint64_t hash64(const void* data, size_t n, uint64_t seed) {
  const auto* p = static_cast<const uint8_t*>(data);
  const uint8_t* end = p + n;
  uint64_t h;
  if (n >= 32) {
    uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
    for (; p + 32 <= end; p += 32) {
      v1 = round64(v1, load64(p));
      v2 = round64(v2, load64(p + 8));
      v3 = round64(v3, load64(p + 16));
      v4 = round64(v4, load64(p + 24));
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    for (uint64_t v : {v1, v2, v3, v4}) h = (h ^ round64(0, v)) * P1 + P4;
  } else {
    h = seed + P5;
  }
  h += n;
  for (; p + 8 <= end; p += 8) h = rotl(h ^ round64(0, load64(p)), 27) * P1 + P4;
  for (; p < end; ++p) h = rotl(h ^ (*p * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

std::vector<uint8_t> encode_packed_header(const PackedHeader& h) {
  std::vector<uint8_t> b(kPackedMagic, kPackedMagic + 8);
  put<uint32_t>(b, kPackedVersion);
  put<uint32_t>(b, 0);  // header bytes, patched below
  put<int64_t>(b, h.count);
  put<int32_t>(b, static_cast<int32_t>(h.channels));
  put<int32_t>(b, static_cast<int32_t>(h.resolution));
  put<int32_t>(b, static_cast<int32_t>(h.class_names.size()));
  put<int32_t>(b, static_cast<int32_t>(h.chunk));
  put<uint64_t>(b, h.data_checksum);
  put<uint64_t>(b, 0);  // header checksum, patched below
  auto str = [&](const std::string& s) {
    put<uint32_t>(b, static_cast<uint32_t>(s.size()));
    b.insert(b.end(), s.begin(), s.end());
  };
  str(h.source);
  for (const auto& n : h.class_names) str(n);
  b.resize(align(b.size(), 4096), 0);
  const auto hb = static_cast<uint32_t>(b.size());
  std::memcpy(b.data() + 12, &hb, 4);
  const uint64_t hc = hash64(b.data(), b.size(), 0x68616d67616eULL);
  std::memcpy(b.data() + 48, &hc, 8);
  return b;
}

PackedHeader decode_packed_header(const uint8_t* p, size_t size, const std::string& file,
                                  size_t& header_bytes) {
  if (size < 56 || std::memcmp(p, kPackedMagic, 8) != 0)
    fail(file, ": wrong magic (expected a packed dataset written by `hamgan prepare`)");
  const auto version = get_at<uint32_t>(p, 8);
  if (version != kPackedVersion)
    fail(file, ": packed format version ", version, ", expected ", kPackedVersion,
         " (re-run `hamgan prepare`)");
  header_bytes = get_at<uint32_t>(p, 12);
  if (header_bytes < 56 || header_bytes % 4096 != 0 || header_bytes > size)
    fail(file, ": wrong size: header of ", header_bytes, " bytes in a file of ", size, " bytes");
  std::vector<uint8_t> copy(p, p + header_bytes);
  std::memset(copy.data() + 48, 0, 8);
  if (hash64(copy.data(), copy.size(), 0x68616d67616eULL) != get_at<uint64_t>(p, 48))
    fail(file, ": header checksum mismatch (the header is corrupt)");
  PackedHeader h;
  h.count = get_at<int64_t>(p, 16);
  h.channels = get_at<int32_t>(p, 24);
  h.resolution = get_at<int32_t>(p, 28);
  const auto classes = get_at<int32_t>(p, 32);
  h.chunk = get_at<int32_t>(p, 36);
  h.data_checksum = get_at<uint64_t>(p, 40);
  size_t off = 56;
  auto str = [&]() {
    if (off + 4 > header_bytes) fail(file, ": header strings run past the header");
    const auto n = get_at<uint32_t>(p, off);
    off += 4;
    if (off + n > header_bytes) fail(file, ": header strings run past the header");
    std::string s(reinterpret_cast<const char*>(p + off), n);
    off += n;
    return s;
  };
  h.source = str();
  for (int32_t i = 0; i < classes; ++i) h.class_names.push_back(str());
  if (h.count < 0 || h.chunk <= 0 || (h.channels != 1 && h.channels != 3) || h.resolution <= 0)
    fail(file, ": implausible header (count ", h.count, ", channels ", h.channels,
         ", resolution ", h.resolution, ", chunk ", h.chunk, ")");
  return h;
}

PackedLayout packed_layout(const PackedHeader& h, size_t header_bytes) {
  PackedLayout l;
  l.header_bytes = header_bytes;
  l.count = h.count;
  l.chunk = h.chunk;
  l.chunks = (h.count + h.chunk - 1) / h.chunk;
  l.image_bytes = static_cast<size_t>(h.channels * h.resolution * h.resolution);
  l.pixel_off = header_bytes;
  l.label_off = l.pixel_off + align(l.image_bytes * h.count, 8);
  l.table_off = l.label_off + align(4 * static_cast<size_t>(h.count), 8);
  l.total = l.table_off + 8 * static_cast<size_t>(l.chunks);
  return l;
}

uint64_t packed_chunk_checksum(const uint8_t* base, const PackedLayout& l, int64_t c) {
  const int64_t first = c * l.chunk, n = std::min(l.chunk, l.count - first);
  uint64_t h = hash64(base + l.pixel_off + first * l.image_bytes, n * l.image_bytes,
                      static_cast<uint64_t>(c));
  h = hash64(base + l.label_off + 4 * first, 4 * n, h);
  return h | 1;
}

}  // namespace hamgan
