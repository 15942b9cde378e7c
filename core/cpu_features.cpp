#include "core/cpu_features.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"

namespace hamgan {

const char* isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx2: return "avx2";
    case CpuIsa::avx512: return "avx512";
    case CpuIsa::avx512_bf16: return "avx512_bf16";
    default: return "other";
  }
}

namespace {
// The words of the first "flags" line (the first processor's flags speak for all); empty where
// there is none.
std::set<std::string> first_flags(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  std::set<std::string> f;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    const size_t colon = line.find(':');
    std::istringstream words(line.substr(colon == std::string::npos ? line.size() : colon + 1));
    for (std::string w; words >> w;) f.insert(w);
    break;
  }
  return f;
}
}  // namespace

CpuIsa cpuinfo_isa(const std::string& cpuinfo) {
  const std::set<std::string> f = first_flags(cpuinfo);
  const auto has = [&](const char* w) { return f.count(w) > 0; };
  if (has("avx512_bf16") || has("amx_bf16")) return CpuIsa::avx512_bf16;
  if (has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq")) return CpuIsa::avx512;
  if (has("avx2") && has("fma")) return CpuIsa::avx2;
  return CpuIsa::other;
}

bool cpuinfo_has_amx(const std::string& cpuinfo) { return first_flags(cpuinfo).count("amx_bf16") > 0; }

bool cpuinfo_has_fast_bf16(const std::string& cpuinfo) {
  return cpuinfo_isa(cpuinfo) == CpuIsa::avx512_bf16;
}

CpuIsa capped_isa(CpuIsa hardware, const char* env_value) {
  const std::string v = env_value ? env_value : "";
  if (v.empty() || v == "native") return hardware;
  for (CpuIsa isa : {CpuIsa::avx2, CpuIsa::avx512, CpuIsa::avx512_bf16}) {
    if (v != isa_name(isa)) continue;
    if (isa > hardware)
      fail("HAMGAN_CPU_ISA=", v, ": this CPU has only ", isa_name(hardware),
           "; the variable can lower the instruction set hamgan assumes, not raise it");
    return isa;
  }
  fail("HAMGAN_CPU_ISA='", v, "': expected avx2, avx512, avx512_bf16 or native");
}

namespace {
const std::string& proc_cpuinfo() {  // this machine's /proc/cpuinfo, read once ("" where unreadable)
  static const std::string text = [] {
    std::ifstream f("/proc/cpuinfo");
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }();
  return text;
}
}  // namespace

CpuIsa cpu_hardware_isa() {
  static const CpuIsa isa = cpuinfo_isa(proc_cpuinfo());
  return isa;
}

CpuIsa cpu_isa() {  // read once: bf16 autocast asks on every forward (compat::before_cpu_autocast)
  static const CpuIsa isa = capped_isa(cpu_hardware_isa(), std::getenv("HAMGAN_CPU_ISA"));
  return isa;
}

bool cpu_has_fast_bf16() { return cpu_isa() == CpuIsa::avx512_bf16; }

bool cpu_has_amx() {
  static const bool amx = [] {
    const char* cap = std::getenv("HAMGAN_CPU_ISA");
    if (cap && *cap && std::string(cap) != "native") return false;
    return cpuinfo_has_amx(proc_cpuinfo());
  }();
  return amx;
}

std::string cpu_isa_description() {
  const CpuIsa isa = cpu_isa(), hw = cpu_hardware_isa();
  std::string s = isa_name(isa);
  if (cpu_has_amx()) s += " + amx";
  if (isa != hw) s += std::string(" (HAMGAN_CPU_ISA; the hardware has ") + isa_name(hw) + ")";
  return s;
}

}  // namespace hamgan
