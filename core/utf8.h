// UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates, nothing past U+10FFFF): what
// every text hamgan writes for other programs (JSON, classes.txt) must be.
#pragma once
#include <cstddef>
#include <string_view>

namespace hamgan {

// Whether `s` is valid UTF-8; if not, `bad` (when given) gets the offset of the first byte that
// is not.
bool valid_utf8(std::string_view s, size_t* bad = nullptr);

}  // namespace hamgan
