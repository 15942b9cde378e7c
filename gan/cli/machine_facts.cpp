#include "gan/cli/machine_facts.h"

#include <ATen/Parallel.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "core/compat.h"
#include "core/cpu_features.h"
#include "core/version.h"
#include "gan/train/amp.h"

namespace hamgan::cli {

namespace {

// A JSON string (RFC 8259 section 7): quotes, backslashes and control characters escaped.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      out += b;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* boolean(bool b) { return b ? "true" : "false"; }
const char* precision(bool bf16) { return bf16 ? "\"bf16\"" : "\"fp32\""; }

}  // namespace

std::string machine_facts_json() {
  const CpuIsa isa = cpu_isa();  // may throw (HAMGAN_CPU_ISA): before any output
  const int gpus = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  const char* cap = std::getenv("HAMGAN_CPU_ISA");
  std::ostringstream o;
  o << "{\"hamgan_version\": " << quoted(kVersion) << ", \"libtorch_version\": "
    << quoted(std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
              std::to_string(TORCH_VERSION_PATCH))
    << ", \"cuda_compiled\": " << boolean(compat::cuda_compiled()) << ", \"cuda_device_count\": " << gpus
    << ", \"cuda_devices\": [";
  bool first_bf16 = false;
  for (int i = 0; i < gpus; ++i) {
    const auto index = static_cast<c10::DeviceIndex>(i);
    const int major = compat::cuda_capability_major(index);
    const bool bf16 = amp_auto(torch::Device(torch::kCUDA, index), major);
    if (i == 0) first_bf16 = bf16;
    o << (i ? ", " : "") << "{\"index\": " << i << ", \"name\": " << quoted(compat::cuda_device_name(index))
      << ", \"capability_major\": " << major << ", \"bf16_native\": " << boolean(major >= 8)
      << ", \"amp_auto\": " << precision(bf16) << "}";
  }
  o << "], \"cpu_isa\": " << quoted(isa_name(isa)) << ", \"cpu_hardware_isa\": " << quoted(isa_name(cpu_hardware_isa()))
    << ", \"cpu_isa_cap\": " << (cap ? quoted(cap) : "null") << ", \"cpu_amx\": " << boolean(cpu_has_amx())
    << ", \"aten_cpu_capability\": " << quoted(compat::aten_cpu_capability())
    << ", \"cpu_bf16_native\": " << boolean(cpu_has_fast_bf16())
    << ", \"cpu_bf16_accumulates_in_fp32\": " << boolean(compat::cpu_bf16_accumulates_in_fp32())
    << ", \"amp_auto_cpu\": " << precision(amp_auto(torch::kCPU, -1))
    << ", \"amp_auto_cuda\": " << (gpus ? precision(first_bf16) : "null") << ", \"threads\": " << at::get_num_threads()
    << ", \"cores\": " << std::thread::hardware_concurrency() << "}\n";
  return o.str();
}

}  // namespace hamgan::cli
