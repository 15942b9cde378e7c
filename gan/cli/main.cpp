// hamgan: class-conditional GANs with swappable global-context blocks.
#include <csignal>
#include <iostream>
#include <string>

#include "core/compat.h"
#include "core/error.h"
#include "core/host_allocator.h"
#include "gan/cli/commands.h"

namespace {
void usage() {
  std::cerr << "usage: hamgan <command> [options]\n\ncommands:\n";
  for (const auto& c : hamgan::cli::commands())
    std::cerr << "  " << c.name << std::string(10 - std::min<size_t>(9, c.name.size()), ' ')
              << c.help << "\n";
  std::cerr << "\n'hamgan <command> --help' lists a command's options; 'hamgan --version' the LibTorch.\n";
}
}  // namespace

int main(int argc, char** argv) {
  // A write past the file-size limit (ulimit -f) then fails with EFBIG, which every writer
  // reports naming the file and removes its temporary; SIGXFSZ's default action kills the
  // process without a word and leaves the temporary behind.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    hamgan::keep_freed_memory_for_reuse();  // before the first tensor: core/host_allocator.h
  } catch (const hamgan::Error& e) {
    std::cerr << "hamgan: error: " << e.what() << "\n";
    return 2;
  }
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  if (name == "--version") try {
    const std::string cpu = hamgan::cpu_isa_description();  // may throw: before any output
    std::cout << "hamgan, " << hamgan::compat::libtorch_description() << ", "
              << (torch::cuda::is_available()
                      ? std::to_string(torch::cuda::device_count()) + " CUDA device(s) visible"
                      : std::string("no CUDA device visible"))
              << "\nCPU: " << cpu << "; ATen kernels "
              << hamgan::compat::aten_cpu_capability() << "; train.amp auto on the CPU: "
              << (hamgan::cpu_has_fast_bf16() ? "bf16 autocast (native bf16)" : "fp32 (no native bf16)")
              << (hamgan::compat::cpu_bf16_accumulates_in_fp32() ? "" : "; forced bf16 accumulates in bf16 here")
              << "\n";
    return 0;
  } catch (const hamgan::Error& e) {
    std::cerr << "hamgan --version: error: " << e.what() << "\n";
    return 1;
  }
  for (const auto& c : hamgan::cli::commands()) {
    if (c.name != name) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const hamgan::Error& e) {
      std::cerr << "hamgan " << name << ": error: " << e.what() << "\n";
    } catch (const cxxopts::exceptions::exception& e) {
      std::cerr << "hamgan " << name << ": " << e.what() << "\n";
    } catch (const c10::Error& e) {
      std::cerr << "hamgan " << name << ": torch error: " << e.what_without_backtrace() << "\n";
    } catch (const std::exception& e) {
      std::cerr << "hamgan " << name << ": error: " << e.what() << "\n";
    }
    return 1;
  }
  std::cerr << "hamgan: unknown command '" << name << "'\n\n";
  usage();
  return 2;
}
