// The message of the hamgan::Error that `f` throws, or "(no error)": tests then check
// that it names the thing and what was expected.
#pragma once
#include <functional>
#include <string>

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

}  // namespace hamgan::test
