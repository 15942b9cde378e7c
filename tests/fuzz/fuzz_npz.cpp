// libFuzzer target: the .npz reader (zip, zip64 extras, deflate, .npy header) on arbitrary bytes.
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "io/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> b(data, data + size);
  try {
    hamgan::npz::read_bytes(b, "fuzz");
  } catch (const hamgan::Error&) {
  }
  return 0;
}
