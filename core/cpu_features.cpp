#include "core/cpu_features.h"

#include <fstream>
#include <sstream>

namespace hamgan {

bool cpuinfo_has_fast_bf16(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') == std::string::npos ? line.size()
                                                                              : line.find(':') + 1));
    std::string w;
    while (words >> w)
      if (w == "avx512_bf16" || w == "amx_bf16") return true;
    return false;  // the first processor's flags speak for all
  }
  return false;
}

bool cpu_has_fast_bf16() {
  static const bool fast = [] {
    std::ifstream f("/proc/cpuinfo");
    std::stringstream ss;
    ss << f.rdbuf();
    return cpuinfo_has_fast_bf16(ss.str());
  }();
  return fast;
}

}  // namespace hamgan
