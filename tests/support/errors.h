// The message of the hamgan::Error that `f` throws, or "(no error)": tests then check
// that it names the thing and what was expected.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"

namespace hamgan::test {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Expects `msg` to contain every one of `parts`.
inline void expect_names(const std::string& msg, const std::vector<std::string>& parts) {
  for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << msg << "' lacks '" << p << "'";
}

}  // namespace hamgan::test
