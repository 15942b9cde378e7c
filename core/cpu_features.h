// What the CPU offers that decides defaults: native bf16 arithmetic (AVX-512 BF16 or AMX),
// which oneDNN uses for bf16 convolutions and matmuls (train.amp: auto).
#pragma once
#include <string>

namespace hamgan {

// True when the "flags" line of `cpuinfo` (Linux /proc/cpuinfo format) lists avx512_bf16 or
// amx_bf16.
bool cpuinfo_has_fast_bf16(const std::string& cpuinfo);
// cpuinfo_has_fast_bf16 of this machine's /proc/cpuinfo (false where it cannot be read).
bool cpu_has_fast_bf16();

}  // namespace hamgan
