// `hamgan bench <what>`: a table of sub-benchmarks, each taking the arguments after <what>.
#include <iostream>
#include <string>

#include "gan/cli/commands.h"

namespace hamgan::cli {

namespace {
const std::vector<Command>& benchmarks() {
  static const std::vector<Command> all = {
      {"train", "median time of full training iterations (D and G steps) on synthetic data",
       bench_train},
      {"context", "forward/backward time of the global-context modules", bench_context},
  };
  return all;
}
void usage() {
  std::cerr << "usage: hamgan bench <what> [options]\n\nbenchmarks:\n";
  for (const auto& b : benchmarks())
    std::cerr << "  " << b.name << std::string(10 - std::min<size_t>(9, b.name.size()), ' ')
              << b.help << "\n";
}
}  // namespace

int bench(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    usage();
    return argc < 2 ? 2 : 0;
  }
  for (const auto& b : benchmarks())
    if (b.name == argv[1]) return b.run(argc - 1, argv + 1);
  std::cerr << "hamgan bench: unknown benchmark '" << argv[1] << "'\n\n";
  usage();
  return 2;
}

}  // namespace hamgan::cli
