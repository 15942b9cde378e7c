// `hamgan compare`: several scored runs side by side (e.g. one per context module, trained with
// the same config and seed). Reads each DIR/fid.csv (written by `hamgan fid --run`) and
// DIR/metrics.jsonl, and writes one figure (FID, and class accuracy when scored with
// --features, against iteration, one line per run) and one table.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hamgan::eval {

struct RunSummary {
  std::string name;            // the run directory's name
  int64_t iteration = 0;       // last scored checkpoint
  double fid = 0, class_acc = 0;  // at that checkpoint (class_acc NaN when not scored)
  int64_t best_iteration = 0;  // checkpoint of the lowest FID
  double best_fid = 0, best_class_acc = 0;
  double img_s = 0;            // median of metrics.jsonl's img_s (NaN without a log)
  std::string features;        // the feature network of every row ("inception" or a classifier)
  // At the last scored checkpoint, NaN where not scored (fid --metrics pr,dc,ifid).
  double precision = 0, recall = 0, density = 0, coverage = 0, ifid = 0;
};

// One summary per run, in the order given. Errors (hamgan::Error) name the run: no fid.csv or
// no rows, two runs of one name, runs scored in different feature networks (their FIDs do not
// compare), more runs than plot colours (10).
std::vector<RunSummary> summarize_runs(const std::vector<std::string>& run_dirs);
// The figure: one panel of FID, a second of class accuracy when every run has it.
void plot_runs(const std::vector<std::string>& run_dirs, const std::string& png_path);
// CSV of the summaries (header run,iteration,fid,class_acc,best_iteration,best_fid,
// best_class_acc,img_s,features), written atomically.
// Error unless PREFIX.csv and PREFIX.png are absent or an earlier comparison's (never a run's
// fid.csv / fid.png, or any other file).
void check_compare_outputs(const std::string& prefix);
void write_run_summaries(const std::vector<RunSummary>& runs, const std::string& csv_path);
// A Markdown table ranked by final FID (lowest first).
std::string ranking_table(std::vector<RunSummary> runs);

}  // namespace hamgan::eval
