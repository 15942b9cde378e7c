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

std::string class_name_problem(const std::string& name) {
  size_t bad = 0;
  if (name.empty()) return "is empty";
  if (!valid_utf8(name, &bad)) return "is not valid UTF-8 (byte " + std::to_string(bad) + ")";
  for (size_t i = 0; i < name.size(); ++i)
    if (static_cast<unsigned char>(name[i]) < 0x20 || name[i] == 0x7f)
      return "holds a control character (byte " + std::to_string(i) + ")";
  return "";
}

void check_class_names(const std::vector<std::string>& names, const std::string& source) {
  for (size_t k = 0; k < names.size(); ++k)
    if (const std::string why = class_name_problem(names[k]); !why.empty())
      fail(source, ": class ", k, "'s name '", escaped(names[k]), "' ", why, "; class names go into classes.txt (one "
           "per line) and an export's config.json, which must be UTF-8: rename it (e.g. `convmv -f latin1 -t utf8` "
           "for Latin-1 folder names)");
}

}  // namespace hamgan
