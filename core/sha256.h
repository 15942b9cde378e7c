// SHA-256 (FIPS 180-4) as 64 lowercase hex digits, what `sha256sum` and Python's
// hashlib.sha256(...).hexdigest() print: a digest any reader can recompute without hamgan.
#pragma once
#include <string>
#include <string_view>

namespace hamgan {

std::string sha256_hex(std::string_view bytes);

}  // namespace hamgan
