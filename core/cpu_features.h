// What the CPU offers that decides defaults: its instruction set class, and whether it has
// native bf16 arithmetic (AVX-512 BF16 or AMX), which oneDNN uses for bf16 convolutions and
// matmuls (train.amp: auto).
//
// HAMGAN_CPU_ISA (avx2, avx512, avx512_bf16 or native) lowers the class hamgan decides by, so
// one machine reproduces the other CPU classes of the project's machines
// (scripts/emulate_cpu.sh sets it with ATen's, oneDNN's and the BLAS libraries' own caps).
#pragma once
#include <string>

namespace hamgan {

// Ordered: each class includes the ones before it.
enum class CpuIsa { other, avx2, avx512, avx512_bf16 };

const char* isa_name(CpuIsa isa);

// The class the "flags" line of `cpuinfo` (Linux /proc/cpuinfo format) shows: avx512_bf16
// (avx512_bf16 or amx_bf16 listed), avx512 (avx512f/bw/vl/dq), avx2 (avx2 and fma), other.
CpuIsa cpuinfo_isa(const std::string& cpuinfo);
// True when that class has native bf16 (kept for callers that only ask this).
bool cpuinfo_has_fast_bf16(const std::string& cpuinfo);

// `hardware` capped by the value of HAMGAN_CPU_ISA (null or "native": no cap). Throws an
// Error naming the variable for an unknown value, or one above what the hardware has.
CpuIsa capped_isa(CpuIsa hardware, const char* env_value);

// Whether the flags line lists AMX's bf16 tiles (amx_bf16): Intel Xeons from Sapphire Rapids on;
// the project's AVX-512 BF16 AMD EPYCs have none. oneDNN's bf16 3x3 convolutions run on the
// tiles there, which changes which convolution form is faster (layers/fold_taps.h).
bool cpuinfo_has_amx(const std::string& cpuinfo);

CpuIsa cpu_hardware_isa();  // this machine's /proc/cpuinfo (other where it cannot be read)
CpuIsa cpu_isa();           // cpu_hardware_isa() capped by HAMGAN_CPU_ISA
bool cpu_has_fast_bf16();   // cpu_isa() has native bf16
// The hardware has AMX and HAMGAN_CPU_ISA does not cap it (unset or native): any cap, even
// avx512_bf16, is taken as below AMX, as scripts/emulate_cpu.sh caps oneDNN there.
bool cpu_has_amx();
// e.g. "avx512_bf16" or "avx2 (HAMGAN_CPU_ISA; the hardware has avx512_bf16)".
std::string cpu_isa_description();

}  // namespace hamgan
