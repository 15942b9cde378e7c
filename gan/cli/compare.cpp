// hamgan compare --run DIR --run DIR ... --out PREFIX
// Scored runs side by side: PREFIX.png (FID and class accuracy against iteration, one line per
// run), PREFIX.csv (last and best scores, median img/s) and a ranking table on stdout.
// hamgan compare --seeds DIR [--out PREFIX] [--from IT]: runs DIR/<name>_s<seed> grouped by name,
// mean +- sd over seeds and Welch's t (gan/eval/seed_table.h); PREFIX.md and PREFIX.svg.
#include <iostream>

#include "core/error.h"
#include "gan/cli/commands.h"
#include "gan/eval/compare_runs.h"
#include "gan/eval/seed_table.h"

namespace hamgan::cli {

int compare(int argc, char** argv) {
  cxxopts::Options opts("hamgan compare",
                        "Scored runs (hamgan fid --run) side by side: one figure, one table, a ranking");
  add_out_option(opts, "a prefix: OUT.png and OUT.csv (OUT.csv or OUT.png name the same pair); with --seeds OUT.md "
                       "and OUT.svg (optional)");
  opts.add_options()("run", "a scored run directory (its scores.csv; repeat, up to 10)",
                     cxxopts::value<std::vector<std::string>>())(
      "seeds", "instead of --run: every DIR/<name>_s<seed> with a score table, grouped by name (mean +- sd over "
      "seeds, Welch's t)", cxxopts::value<std::string>())(
      "from", "with --seeds: the figure's first iteration", cxxopts::value<int64_t>()->default_value("0"));
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  if (r.count("seeds")) {
    if (r.count("run")) fail("compare: --seeds DIR and --run DIR are two forms; give one of them");
    eval::compare_seeds(r["seeds"].as<std::string>(),
                        r.count("out") ? eval::compare_prefix(r["out"].as<std::string>()) : "", r["from"].as<int64_t>(),
                        std::cout);
    return 0;
  }
  if (r.count("from")) fail("compare: --from applies to --seeds only");
  if (!r.count("run")) fail("compare: expected --run DIR (one per run to compare)");
  const std::string out = eval::compare_prefix(out_of(r));
  const auto dirs = r["run"].as<std::vector<std::string>>();
  eval::check_compare_outputs(out);  // before any run is read: a refusal costs nothing
  const auto runs = eval::summarize_runs(dirs);
  eval::plot_runs(dirs, out + ".png");
  eval::write_run_summaries(runs, out + ".csv");
  std::cout << eval::ranking_table(runs) << "wrote " << out << ".png and " << out << ".csv\n";
  return 0;
}

}  // namespace hamgan::cli
