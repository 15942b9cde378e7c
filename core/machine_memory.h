// The machine's memory, for bounds checked before something large is allocated: a size that
// cannot fit is an error naming what asked for it, not a kernel's OOM kill or a raw allocation
// failure of many terabytes.
#pragma once
#include <cstdint>

namespace hamgan {

// Physical memory in bytes (sysconf); 0 when unknown.
int64_t physical_memory_bytes();

}  // namespace hamgan
