// `hamgan compare`: several scored runs side by side (e.g. one per context module, trained with
// the same config and seed). Reads each run's score table (gan/eval/score_table.h, written by
// `hamgan fid --run` or while training) and DIR/metrics.jsonl, and writes one figure (a panel
// per metric of the registry that every run has, against iteration, one line per run) and one
// table (a column per metric), both built from the registry (metrics/registry.cpp).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hamgan::eval {

struct RunSummary {
  std::string name;            // the run directory's name
  int64_t iteration = 0;       // last scored checkpoint
  double fid = 0;              // at that checkpoint
  int64_t best_iteration = 0;  // checkpoint of the lowest finite FID; -1 when no FID is finite
  double best_fid = 0;
  std::vector<int64_t> nan_iterations;  // rows whose FID is not finite (a failed score): never best
  double img_s = 0;            // median of metrics.jsonl's img_s (NaN without a log)
  std::string features;        // the feature network of every row ("inception" or a classifier)
  // Every table metric by name (metrics::table_metric_names()), at the last scored checkpoint and
  // at the best-FID one; absent where not scored.
  std::map<std::string, double> last, at_best;
};

// One summary per run, in the order given. Errors (hamgan::Error) name the run: no scores.csv or
// no rows, two rows for one iteration (which of them is the checkpoint's score cannot be
// told), two runs of one name, runs scored in different feature networks (their FIDs do not
// compare), more runs than plot colours (10).
std::vector<RunSummary> summarize_runs(const std::vector<std::string>& run_dirs);
// The figure: one panel of FID, a second of class accuracy when every run has it.
void plot_runs(const std::vector<std::string>& run_dirs, const std::string& png_path);
// The PREFIX of `--out`: "cmp", "cmp.csv" and "cmp.png" all give "cmp". Error when it names
// a folder ("dir/", ".", ""): the outputs would be the hidden files dir/.csv and dir/.png.
std::string compare_prefix(const std::string& out);
// io/output_path.h's rule for both outputs: error unless PREFIX.csv and PREFIX.png are absent
// or an earlier comparison's (a PNG beside a compare table; never a run's scores.csv / scores.png,
// or any other file), and their folder exists. Nothing is written.
void check_compare_outputs(const std::string& prefix);
// CSV of the summaries (header run,iteration,best_iteration,img_s,features, then each table
// metric at the last checkpoint, then best_<metric> at the best-FID one), written atomically; a
// value not computed (or not finite) is an empty field.
std::string run_summary_header();
void write_run_summaries(const std::vector<RunSummary>& runs, const std::string& csv_path);
// A Markdown table (a column per metric any run has) ranked by final FID (lowest first; a run whose final FID is not finite
// last, shown as nan), then a note per run with non-finite FIDs naming their iterations.
std::string ranking_table(std::vector<RunSummary> runs);

}  // namespace hamgan::eval
