// splitmix64's finaliser: a cheap, well-mixed 64-bit hash. Used where a value must depend
// only on its inputs (shuffles, flips, synthetic images), never on thread timing.
#pragma once
#include <cstdint>

namespace hamgan {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace hamgan
