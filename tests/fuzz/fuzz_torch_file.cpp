// libFuzzer target: the legacy torch.save reader (pickle subset + storages) on arbitrary bytes.
// Any hamgan::Error is an accepted rejection; crashes, leaks and sanitizer reports are findings.
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "io/torch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> b(data, data + size);
  try {
    hamgan::torch_file::load_legacy(b, "fuzz");
  } catch (const hamgan::Error&) {
  }
  return 0;
}
