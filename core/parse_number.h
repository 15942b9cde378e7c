// Whole-string number parsing for config values, CLI lists and CSV cells: true only when all
// of `s` is one number (std::stoll / std::stod alone accept "12abc" and throw on "").
#pragma once
#include <cmath>
#include <cstdint>
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
inline bool parse_real(const std::string& s, double& out) {
  if (s.empty()) return false;
  size_t pos = 0;
  try {
    out = std::stod(s, &pos);
  } catch (const std::exception&) {
    return false;
  }
  return pos == s.size() && std::isfinite(out);
}

}  // namespace hamgan
