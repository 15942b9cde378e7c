// Errors the user can act on: each names the thing (file, key, shape) and what was expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace hamgan {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Error whose message is built from stream-able pieces: fail("key '", k, "': expected ", e).
template <typename... Args>
[[noreturn]] void fail(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw Error(os.str());
}

}  // namespace hamgan
