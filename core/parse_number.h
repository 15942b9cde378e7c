// Whole-string number parsing for config values, CLI lists and CSV cells: true only when all
// of `s` is one number (std::stoll / std::stod alone accept "12abc" and throw on "").
#pragma once
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace hamgan {

inline bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty()) return false;
  size_t pos = 0;
  try {
    out = std::stoll(s, &pos, 10);
  } catch (const std::exception&) {
    return false;
  }
  return pos == s.size();
}

// Finite reals only: "nan" and "inf" are not numbers a config or a table should hold.
// A finite double, the whole text; `why` (when given) gets " (...)" saying what a rejected
// number is: too large or too small in magnitude for a double, or not finite.
inline bool parse_real(const std::string& s, double& out, std::string* why = nullptr) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  const auto said = [&](const char* w) {
    if (why) *why = w;
    return false;
  };
  if (errno == ERANGE && std::fabs(v) > 1) return said(" (too large for a double: at most 1.8e308 in magnitude)");
  if (!std::isfinite(v)) return said(" (not a finite number)");
  if (errno == ERANGE) return said(" (too small for a double: nonzero values start at 2.2e-308; write 0 for none)");
  out = v;
  return true;
}

// A number as a reader wrote it: integers in full up to 1e15 (1000000, not 1e+06), else the
// shortest text that reads back as the same double.
inline std::string number_text(double v) {
  char b[32];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(b, sizeof b, "%.0f", v);
    return b;
  }
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(b, sizeof b, "%.*g", p, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

}  // namespace hamgan
