#include "io/output_path.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/table_line.h"

namespace hamgan::io {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPngSignature("\x89PNG\r\n\x1a\n", 8);
constexpr std::string_view kZipLocalHeader("PK\x03\x04", 4);

// The first bytes of a regular file; false when it cannot be read.
bool read_head(const std::string& path, std::string& head) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  head.resize(kOutputHeadBytes);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return !in.bad();
}

bool is_png(std::string_view h) { return h.substr(0, kPngSignature.size()) == kPngSignature; }

// The name of a zip archive's first member (its local header: the name's length at byte 26,
// the name at byte 30), or "" when `h` does not start with one.
std::string first_zip_member(std::string_view h) {
  if (h.substr(0, 4) != kZipLocalHeader || h.size() < 30) return "";
  const size_t n = static_cast<uint8_t>(h[26]) | (static_cast<size_t>(static_cast<uint8_t>(h[27])) << 8);
  return 30 + n <= h.size() ? std::string(h.substr(30, n)) : "";
}

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string first_line(std::string_view h) {
  h = without_bom(h);  // a table saved by a spreadsheet is still that table
  std::string line(h.substr(0, h.find('\n')));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

// No NUL and no control character but tab, CR and LF: text (UTF-8 included).
bool is_text(std::string_view h) {
  return std::all_of(h.begin(), h.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 || u == '\t' || u == '\n' || u == '\r';
  });
}

std::string describe_head(std::string_view h) {
  if (h.empty()) return "an empty file";
  if (is_png(h)) return "a PNG image";
  if (h.substr(0, 4) == kZipLocalHeader) {
    const std::string m = first_zip_member(h);
    if (ends_with(m, ".npy")) return "an .npz of arrays";
    return "a zip archive whose first member is '" + m.substr(0, 80) + "', as in a checkpoint";
  }
  if (is_text(h)) {
    const std::string line = first_line(h);
    return "a text file whose first line is '" + line.substr(0, 80) + (line.size() > 80 ? "...'" : "'");
  }
  return "a binary file";
}

}  // namespace

const OutputKind& png_output() {
  static const OutputKind k{"a PNG image", [](std::string_view h) { return is_png(h); }};
  return k;
}

const OutputKind& npz_output() {
  static const OutputKind k{"an .npz of arrays",
                            [](std::string_view h) { return ends_with(first_zip_member(h), ".npy"); }};
  return k;
}

OutputKind text_output(std::string what, std::vector<std::string> first_lines) {
  return {std::move(what), [lines = std::move(first_lines)](std::string_view h) {
            if (!is_text(h)) return false;
            return std::find(lines.begin(), lines.end(), first_line(h)) != lines.end();
          }};
}

std::string describe_existing(const std::string& path) {
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec), target = fs::status(path, ec);
  if (fs::is_symlink(link) && !fs::exists(target)) return "a symbolic link to nothing";
  if (fs::is_directory(target)) return "a directory";
  if (!fs::exists(target)) return "nothing";
  if (!fs::is_regular_file(target)) return "not a regular file (a device, pipe or socket)";
  std::string head;
  if (!read_head(path, head)) return "a file that cannot be read";
  return describe_head(head);
}

void check_output_path(const std::string& path, const OutputKind& kind, const std::string& option) {
  const std::string who = option.empty() ? path : option + " " + path;
  const std::string expected = "; expected the path of " + kind.what;
  if (path.empty()) fail(option.empty() ? "output" : option, ": an empty path names no file", expected);
  const fs::path p(path);
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") fail(who, ": names a folder, not a file", expected);
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(p, ec);
  if (fs::exists(link)) {
    // An earlier output of the same kind may go; anything else stays and nothing is written.
    const fs::file_status target = fs::status(p, ec);
    std::string head;
    const bool same = fs::is_regular_file(target) && read_head(path, head) && kind.recognises(head) &&
                      (!kind.recognises_file || kind.recognises_file(path));
    if (!same)
      fail(who, " exists and is not ", kind.what, " (it is ", describe_existing(path),
           "); it is left as it is and nothing was written: choose another path, or move that one away first");
    return;
  }
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    fail(who, ": its folder ", dir.string(), fs::exists(dir, ec) ? " is not a folder" : " does not exist",
         " (hamgan creates no folder for a single file; create it first)");
}

}  // namespace hamgan::io
