#include "io/tfevents_reader.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/crc32c.h"
#include "core/error.h"
#include "io/zip_reader.h"  // little_endian

namespace hamgan::io {

namespace {

namespace fs = std::filesystem;

// Protocol buffer wire format (protobuf.dev/programming-guides/encoding), read: a key is
// (field << 3) | wire type; 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
class ProtoFields {
 public:
  ProtoFields(const char* p, size_t n) : p_(p), end_(p + n) {}
  bool done() const { return p_ == end_; }
  // The next field's number and wire type; its payload in varint_ or bytes_. False when malformed.
  bool next(int& field, int& wire) {
    uint64_t k;
    if (!varint(k)) return false;
    field = static_cast<int>(k >> 3), wire = static_cast<int>(k & 7);
    switch (wire) {
      case 0: return varint(value);
      case 1: return skip(8);
      case 5: return skip(4);
      case 2: {
        uint64_t len;
        if (!varint(len) || len > static_cast<uint64_t>(end_ - p_)) return false;
        bytes = p_, size = static_cast<size_t>(len);
        p_ += len;
        return true;
      }
      default: return false;  // groups (3, 4) are not in these messages
    }
  }
  uint64_t value = 0;            // wire type 0
  const char* bytes = nullptr;  // wire type 2
  size_t size = 0;

 private:
  bool varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p_ < end_; shift += 7) {
      const auto b = static_cast<uint8_t>(*p_++);
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool skip(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    p_ += n;
    return true;
  }
  const char* p_;
  const char* end_;
};

// Whether a Summary holds a value whose tag starts with `prefix`; false also when malformed (ok).
bool summary_has_tag(const char* p, size_t n, const std::string& prefix, bool& ok) {
  ProtoFields summary(p, n);
  int field, wire;
  while (!summary.done()) {
    if (!summary.next(field, wire)) return ok = false;
    if (field != 1 || wire != 2) continue;  // Summary.value
    ProtoFields value(summary.bytes, summary.size);
    while (!value.done()) {
      if (!value.next(field, wire)) return ok = false;
      if (field == 1 && wire == 2 && value.size >= prefix.size() &&
          std::memcmp(value.bytes, prefix.data(), prefix.size()) == 0)
        return true;  // Value.tag
    }
  }
  return false;
}

uint64_t le_at(const char* p, int bytes) { return little_endian(reinterpret_cast<const uint8_t*>(p), bytes); }

void read_events_file(const std::string& path, const std::string& prefix, std::set<int64_t>& steps) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path, ": cannot read the TensorBoard events file");
  const std::string data((std::istreambuf_iterator<char>(f)), {});
  size_t at = 0;
  // TFRecord: uint64 length, masked CRC-32C of those 8 bytes, the data, masked CRC-32C of it.
  while (data.size() - at >= 12) {
    const uint64_t len = le_at(data.data() + at, 8);
    if (le_at(data.data() + at + 8, 4) != mask_crc32c(crc32c(data.data() + at, 8)))
      fail(path, ": the record at byte ", at, " has a length whose checksum does not match");
    const size_t left = data.size() - at;
    if (left < 16 || len > left - 16) return;  // torn: its writer was killed inside this write
    const char* event = data.data() + at + 12;
    if (le_at(event + len, 4) != mask_crc32c(crc32c(event, len)))
      fail(path, ": the record at byte ", at, " has data whose checksum does not match");
    ProtoFields e(event, static_cast<size_t>(len));
    int64_t step = 0;
    bool tagged = false, ok = true;
    int field, wire;
    while (ok && !e.done()) {
      if (!e.next(field, wire)) ok = false;
      else if (field == 2 && wire == 0) step = static_cast<int64_t>(e.value);  // Event.step
      else if (field == 5 && wire == 2) tagged = summary_has_tag(e.bytes, e.size, prefix, ok) || tagged;
    }
    if (!ok) fail(path, ": the record at byte ", at, " is not a TensorBoard Event");
    if (tagged) steps.insert(step);
    at += 16 + static_cast<size_t>(len);
  }
}

}  // namespace

std::set<int64_t> tagged_steps(const std::string& dir, const std::string& prefix) {
  std::set<int64_t> steps;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return steps;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
      files.push_back(entry.path().string());
  if (ec) fail(dir, ": cannot list the TensorBoard events folder: ", ec.message());
  for (const auto& path : files) read_events_file(path, prefix, steps);
  return steps;
}

}  // namespace hamgan::io
