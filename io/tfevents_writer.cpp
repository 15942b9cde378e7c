#include "io/tfevents_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/crc32c.h"
#include "core/error.h"
#include "io/atomic_file.h"

namespace hamgan::io {

namespace tfevents {

namespace {

// Protocol buffer wire format (protobuf.dev/programming-guides/encoding): a key is
// (field << 3) | wire type; 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
void varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
void key(std::string& out, int field, int wire) { varint(out, static_cast<uint64_t>(field) << 3 | wire); }
void little_endian(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i) & 0xFF));
}
void int_field(std::string& out, int field, int64_t v) {  // int32/int64/enum: two's complement varint
  key(out, field, 0);
  varint(out, static_cast<uint64_t>(v));
}
void double_field(std::string& out, int field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  key(out, field, 1);
  little_endian(out, bits, 8);
}
void float_field(std::string& out, int field, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  key(out, field, 5);
  little_endian(out, bits, 4);
}
void bytes_field(std::string& out, int field, const std::string& bytes) {  // strings, bytes, messages
  key(out, field, 2);
  varint(out, bytes.size());
  out += bytes;
}

// Event's wall_time and step; the caller adds the one payload field.
std::string event_head(double wall_time, int64_t step) {
  std::string e;
  double_field(e, 1, wall_time);
  if (step != 0) int_field(e, 2, step);  // proto3: a zero scalar is not written
  return e;
}

}  // namespace

std::string record(const std::string& data) {
  std::string r;
  little_endian(r, data.size(), 8);
  const uint32_t len_crc = mask_crc32c(crc32c(r.data(), 8));
  little_endian(r, len_crc, 4);
  r += data;
  little_endian(r, mask_crc32c(crc32c(data.data(), data.size())), 4);
  return r;
}

std::string file_version_event(double wall_time) {
  std::string e = event_head(wall_time, 0);
  bytes_field(e, 3, "brain.Event:2");
  return e;
}

std::string session_start_event(double wall_time, int64_t step) {
  std::string log;
  int_field(log, 1, 1);  // SessionLog.status = START
  std::string e = event_head(wall_time, step);
  bytes_field(e, 7, log);
  return e;
}

std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  std::string summary;
  for (const auto& [tag, v] : values) {
    std::string value;
    bytes_field(value, 1, tag);
    float_field(value, 2, static_cast<float>(v));
    bytes_field(summary, 1, value);
  }
  std::string e = event_head(wall_time, step);
  bytes_field(e, 5, summary);
  return e;
}

std::string image_event(double wall_time, int64_t step, const std::string& tag, const Image& image) {
  std::string img;
  int_field(img, 1, image.height);
  int_field(img, 2, image.width);
  int_field(img, 3, image.channels);
  bytes_field(img, 4, image.png);
  std::string value;
  bytes_field(value, 1, tag);
  bytes_field(value, 4, img);
  std::string summary;
  bytes_field(summary, 1, value);
  std::string e = event_head(wall_time, step);
  bytes_field(e, 5, summary);
  return e;
}

}  // namespace tfevents

namespace {

namespace fs = std::filesystem;
constexpr const char* kPrefix = "events.out.tfevents.";

double wall_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) return "localhost";
  return host;
}

// The name for a file started now, sorting after every event file already in `dir`.
std::string new_file_name(const std::string& dir) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  long long seconds = std::chrono::duration_cast<std::chrono::seconds>(now).count();
  const long long micros = std::chrono::duration_cast<std::chrono::microseconds>(now).count() % 1000000;
  const auto name = [&] {
    char buf[512];
    std::snprintf(buf, sizeof buf, "%s%010lld.%s.%06lld.%d", kPrefix, seconds, host_name().c_str(), micros,
                  static_cast<int>(::getpid()));
    return std::string(buf);
  };
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    const std::string other = f.path().filename().string();
    if (other.rfind(kPrefix, 0) != 0 || other < name()) continue;
    long long s = 0;  // a clock set back: one second past the newest file's
    if (std::sscanf(other.c_str() + std::strlen(kPrefix), "%lld", &s) == 1 && s >= seconds) seconds = s + 1;
  }
  return name();
}

}  // namespace

TfEventsWriter::TfEventsWriter(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) fail(dir, ": cannot create the TensorBoard directory", ec ? ": " + ec.message() : "");
  path_ = (fs::path(dir) / new_file_name(dir)).string();
  // O_EXCL: an events file is never another's continuation or replacement.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_, ": cannot create the TensorBoard events file: ", write_error_text(errno));
  add(tfevents::file_version_event(wall_time()));
  flush();
}

TfEventsWriter::~TfEventsWriter() {
  try {
    flush();
  } catch (...) {  // a destructor reports nothing; the last flush's error was the caller's to see
  }
  if (fd_ >= 0) ::close(fd_);
}

void TfEventsWriter::add(const std::string& event) { pending_ += tfevents::record(event); }

void TfEventsWriter::session_start(int64_t step) { add(tfevents::session_start_event(wall_time(), step)); }

void TfEventsWriter::scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  if (!values.empty()) add(tfevents::scalars_event(wall_time(), step, values));
}

void TfEventsWriter::image(int64_t step, const std::string& tag, const tfevents::Image& image) {
  add(tfevents::image_event(wall_time(), step, tag, image));
}

void TfEventsWriter::flush() {
  size_t done = 0;
  while (done < pending_.size()) {
    const ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      pending_.erase(0, done);
      fail(path_, ": cannot write TensorBoard events: ", write_error_text(err));
    }
    done += static_cast<size_t>(n);
  }
  pending_.clear();
}

}  // namespace hamgan::io
