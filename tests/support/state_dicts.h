// Bit-for-bit equality of two state dicts (same names, torch::equal values); the first
// differing name is reported as a test failure.
#pragma once
#include <gtest/gtest.h>

#include "core/state_dict.h"

namespace hamgan::test {

inline bool identical(const TensorMap& a, const TensorMap& b) {
  if (a.size() != b.size()) {
    ADD_FAILURE() << "state dicts of " << a.size() << " and " << b.size() << " entries";
    return false;
  }
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || !torch::equal(v, it->second)) {
      ADD_FAILURE() << "differs: " << k;
      return false;
    }
  }
  return true;
}

}  // namespace hamgan::test
