// hamgan dgap --run DIR [-n N]
// D's mean output on training images, held-out images and G's images at every checkpoint of a
// run (gan/eval/d_gap.h): a gap between the first two that grows is D memorising the training set.
#include <cstdio>
#include <iostream>

#include "core/error.h"
#include "gan/cli/commands.h"
#include "gan/eval/d_gap.h"
#include "core/device.h"

namespace hamgan::cli {

int dgap(int argc, char** argv) {
  cxxopts::Options opts("hamgan dgap",
                        "D(x) on training vs held-out images and D(G(z)), per checkpoint: is D overfitting?");
  opts.add_options()("run", "a run directory (its checkpoints/)", cxxopts::value<std::string>());
  add_count_option(opts, "of each kind (training, held-out, generated) per checkpoint", "1000");
  add_device_option(opts);
  add_threads_option(opts);
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  if (!r.count("run")) fail("dgap: expected --run DIR");
  set_threads(r);
  const std::string dir = r["run"].as<std::string>();
  const auto rows = eval::d_gap_run(dir, count_of(r), resolve_device(r["device"].as<std::string>(), "--device"));
  std::printf("%10s %9s %9s %9s %9s\n", "iteration", "D(train)", "D(test)", "D(G(z))", "gap");
  for (const auto& row : rows)
    std::printf("%10lld %9.4f %9.4f %9.4f %9.4f\n", static_cast<long long>(row.iteration), row.d_train, row.d_test,
                row.d_fake, row.gap());
  std::cout << "wrote " << dir << "/d_gap.csv\n";
  return 0;
}

}  // namespace hamgan::cli
