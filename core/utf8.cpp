#include "core/utf8.h"

#include <cstdint>

namespace hamgan {

bool valid_utf8(std::string_view s, size_t* bad) {
  size_t i = 0;
  const auto fail_at = [&](size_t at) {
    if (bad) *bad = at;
    return false;
  };
  while (i < s.size()) {
    const auto c = static_cast<uint8_t>(s[i]);
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if (c < 0x80) len = 1, cp = c;
    else if ((c & 0xe0) == 0xc0) len = 2, cp = c & 0x1f, min = 0x80;
    else if ((c & 0xf0) == 0xe0) len = 3, cp = c & 0x0f, min = 0x800;
    else if ((c & 0xf8) == 0xf0) len = 4, cp = c & 0x07, min = 0x10000;
    else return fail_at(i);
    if (i + len > s.size()) return fail_at(i);
    for (size_t k = 1; k < len; ++k) {
      const auto t = static_cast<uint8_t>(s[i + k]);
      if ((t & 0xc0) != 0x80) return fail_at(i);
      cp = (cp << 6) | (t & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return fail_at(i);
    i += len;
  }
  return true;
}

}  // namespace hamgan
