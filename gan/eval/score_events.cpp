#include "gan/eval/score_events.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "gan/eval/real_scores.h"
#include "io/tfevents_reader.h"
#include "metrics/metric.h"

namespace hamgan::eval {

std::vector<std::pair<std::string, double>> score_scalars(const ScoreRow& row) {
  std::vector<std::pair<std::string, double>> scalars;
  for (const auto& name : metrics::table_metric_names()) scalars.emplace_back("eval/" + name, row.value(name));
  return scalars;
}

namespace {
// Runs f unless its line has failed; an error turns the line off and is said once.
bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

void guarded(bool& ok, const ScoreEvents::Warn& warn, const std::function<void()>& f) {
  if (!ok) return;
  try {
    f();
  } catch (const Error& e) {
    ok = false;
    if (warn) warn(std::string("TensorBoard's view of the scores: ") + e.what() + "; no more of that line is written");
  }
}
}  // namespace

ScoreEvents::ScoreEvents(std::string run_dir)
    : samples_(run_dir, true),
      real_(run_dir, true, "real_test"),
      samples_ok_(is_directory(samples_.dir())),
      real_ok_(samples_ok_),
      run_dir_(std::move(run_dir)) {}

void ScoreEvents::write_row(const ScoreRow& row, const Warn& warn, TensorBoardLog* rows_to) {
  guarded(samples_ok_, warn, [&] {
    TensorBoardLog& log = rows_to ? *rows_to : samples_;
    if (!log.enabled()) log.open();
    log.scalars(row.iteration, score_scalars(row));
  });
}

void ScoreEvents::add(const ScoreRow& row, const Warn& warn, TensorBoardLog* rows_to) {
  write_row(row, warn, rows_to);
  add_real(row, warn);
}

void ScoreEvents::add_real(const ScoreRow& row, const Warn& warn) {
  guarded(real_ok_, warn, [&] {
    if (!real_row_) real_row_ = real_scores_of(run_dir_, row.net, row.n);
    if (!real_row_) return;
    if (!real_steps_) real_steps_ = io::tagged_steps(real_.dir(), "eval/");
    if (!real_steps_->insert(row.iteration).second) return;
    if (!real_.enabled()) real_.open();
    real_.scalars(row.iteration, score_scalars(*real_row_));
  });
}

void ScoreEvents::add_missing(std::vector<ScoreRow> rows, const Warn& warn, TensorBoardLog* rows_to,
                              int64_t just_scored) {
  std::set<int64_t> have;
  guarded(samples_ok_, warn, [&] { have = io::tagged_steps(samples_.dir(), "eval/"); });
  std::stable_sort(rows.begin(), rows.end(), [](const ScoreRow& a, const ScoreRow& b) { return a.iteration < b.iteration; });
  for (const ScoreRow& r : rows) {
    if (have.insert(r.iteration).second || r.iteration == just_scored) write_row(r, warn, rows_to);
    add_real(r, warn);
  }
}

ScoreEvents::Warn warn_on(std::ostream& log) {
  return [&log](const std::string& what) { log << "warning: " << what << "\n" << std::flush; };
}

}  // namespace hamgan::eval
