#include "core/config_keys.h"

#include <cmath>
#include <sstream>

#include "core/parse_number.h"

namespace hamgan {

const char* on_resume_word(OnResume r) {
  switch (r) {
    case OnResume::Change: return "change";
    case OnResume::Model: return "model";
    case OnResume::Keep: return "keep";
  }
  return "change";
}


std::string Interval::text() const {
  if (std::isinf(hi) && !std::isinf(lo)) return (lo_open ? "> " : ">= ") + number_text(lo);
  return (lo_open ? "(" : "[") + number_text(lo) + ", " + number_text(hi) + (hi_open ? ")" : "]");
}

namespace {
// A bound as a reader takes it in: 2^40, not 1099511627776 (powers of two past a billion).
std::string integer_text(int64_t v) {
  if (v >= (int64_t(1) << 30) && (v & (v - 1)) == 0) {
    int k = 0;
    while ((int64_t(1) << k) != v) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(v);
}
}  // namespace

std::string integer_range_text(int64_t lo, int64_t hi) {
  if (hi == std::numeric_limits<int64_t>::max())
    return lo == std::numeric_limits<int64_t>::min() ? "any integer" : ">= " + integer_text(lo);
  return "[" + integer_text(lo) + ", " + integer_text(hi) + "]";
}

void list_key(const ConfigNode& node, const KeyInfo& row) {
  std::vector<KeyInfo>* out = node.listing();
  if (!out) return;
  KeyInfo k = row;
  k.path = node.path().empty() ? row.path : node.path() + "." + row.path;
  k.value = node.recorded(row.path);
  out->push_back(std::move(k));
}

namespace keys {

// Inside [lo, hi] (ConfigNode::real checked that); an open end itself is the error.
void check_interval(ConfigNode& n, const std::string& name, double v, const Interval& in) {
  const std::string expected = std::string("expected a value ") + (std::isinf(in.hi) ? "" : "in ") + in.text();
  if ((in.lo_open && v <= in.lo) || (in.hi_open && v >= in.hi)) n.fail_key(name, expected + ", got " + number_text(v));
}

}  // namespace keys

}  // namespace hamgan
