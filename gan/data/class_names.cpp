#include "gan/data/class_names.h"

#include <cstdio>

#include "core/error.h"
#include "core/utf8.h"

namespace hamgan {

namespace {

// The name with every byte outside printable ASCII as \xNN: readable in any terminal.
std::string escaped(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    }
  }
  return out;
}

}  // namespace

void check_class_names(const std::vector<std::string>& names, const std::string& source) {
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string& n = names[k];
    size_t bad = 0;
    std::string why;
    if (n.empty()) why = "is empty";
    else if (!valid_utf8(n, &bad)) why = "is not valid UTF-8 (byte " + std::to_string(bad) + ")";
    for (size_t i = 0; i < n.size() && why.empty(); ++i)
      if (static_cast<unsigned char>(n[i]) < 0x20 || n[i] == 0x7f) why = "holds a control character (byte " + std::to_string(i) + ")";
    if (!why.empty())
      fail(source, ": class ", k, "'s name '", escaped(n), "' ", why, "; class names go into classes.txt (one per "
           "line) and an export's config.json, which must be UTF-8: rename it (e.g. `convmv -f latin1 -t utf8` for "
           "Latin-1 folder names)");
  }
}

}  // namespace hamgan
