// A run's score table DIR/scores.csv: `iteration,n,seconds,features,` then one column per metric
// of the registry fit for a table (metrics::table_metric_names(): fid,is,kid,class_acc,...), one
// row per scored checkpoint. Rows are appended one at a time (one write + flush + fsync each),
// so a crash loses at most the row being computed. An empty field (or "nan") means not
// computed; `features` names the feature network ("inception", a domain classifier's identity
// or a DINOv2 backbone's: its fid column is then FD_DINOv2). The table is read by its header, so
// a table of a subset of the columns reads as it is, and is rewritten (atomically) in the
// current header before a row is appended.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace hamgan::eval {

struct ScoreRow {
  int64_t iteration = 0;
  int64_t n = 0;
  double seconds = 0;
  std::string net;                        // FeatureNet::identity ("" = Inception, written "inception")
  std::map<std::string, double> values;   // by metric name; absent: not computed
  double value(const std::string& metric) const;  // NaN when not computed
};

// The current header.
std::string score_table_header();

// DIR/scores.csv
std::string scores_csv(const std::string& run_dir);
// DIR/scores.png, the plot of the table (gan/eval/score_run.h).
std::string scores_png(const std::string& run_dir);
// DIR/real_scores.csv: the data's own test images scored in the table's features, one row in
// the table's format (gan/eval/real_scores.h).
std::string real_scores_csv(const std::string& run_dir);
// The table a run's scores are read from and written to: scores.csv (absent: no rows). A
// pre-release build's fid.csv in its place is an error naming it and `hamgan fid --run DIR`.
std::string run_score_table(const std::string& run_dir);

// All rows of one table file; a missing file gives none; a leading UTF-8 byte-order mark is
// skipped. A header with an unknown or missing column, a malformed line, or a value its metric
// can never take (metrics::MetricEntry::range: a negative FID, a precision above 1):
// hamgan::Error naming the file, the line number and the column.
std::vector<ScoreRow> read_score_table(const std::string& path);
// The rows of a run (run_score_table).
std::vector<ScoreRow> read_run_scores(const std::string& run_dir);
std::set<int64_t> scored_iterations(const std::vector<ScoreRow>& rows);
// Error from `who` (the command) unless row `a` (of table `ta`) and row `b` (of `tb`) were scored
// in one feature network with one sample count: an FID's value and its bias depend on both, so
// scores of other networks or counts never rank, average or test against each other.
void check_comparable(const std::string& who, const std::string& ta, const ScoreRow& a, const std::string& tb,
                      const ScoreRow& b);
// Sorts the rows of table `path` by iteration (stable); hamgan::Error naming the file when two
// rows have one iteration (a stale row, a hand edit, two scorers): which of them is the
// checkpoint's score cannot be told, and either could silently become the best.
void sort_one_row_per_iteration(std::vector<ScoreRow>& rows, const std::string& path);
// Writes `rows` as table `path` (atomically: the old file or the new one, never a mix).
void write_score_table(const std::string& path, const std::vector<ScoreRow>& rows);
// Appends one row to DIR/scores.csv (see above for a run with only fid.csv, or another header).
void append_run_score(const std::string& run_dir, const ScoreRow& row);
// Rewrites DIR/scores.csv (atomically) without its rows of `iteration`, as before a row of a
// newer checkpoint of that iteration replaces them; returns how many went.
int64_t remove_run_scores(const std::string& run_dir, int64_t iteration);

}  // namespace hamgan::eval
