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
std::string view_dir(const std::string& run_dir) { return (std::filesystem::path(run_dir) / "tensorboard").string(); }

bool has_view(const std::string& run_dir) {
  std::error_code ec;
  return std::filesystem::is_directory(view_dir(run_dir), ec);
}
}  // namespace

ScoreEvents::ScoreEvents(std::string run_dir)
    : run_dir_(std::move(run_dir)),
      samples_ok_(has_view(run_dir_)),
      real_ok_(samples_ok_),
      samples_(run_dir_, samples_ok_),
      real_(run_dir_, real_ok_, "real_test") {}

void ScoreEvents::write_row(const ScoreRow& row, TensorBoardLog* rows_to) {
  if (rows_to) return rows_to->scalars(row.iteration, score_scalars(row));
  if (!samples_ok_) return;
  try {
    if (!samples_.enabled()) samples_.open();
    samples_.scalars(row.iteration, score_scalars(row));
  } catch (const Error&) {
    samples_ok_ = false;  // one error per file, not one per row
    throw;
  }
}

void ScoreEvents::add(const ScoreRow& row, TensorBoardLog* rows_to) {
  write_row(row, rows_to);
  add_real(row);
}

void ScoreEvents::add_real(const ScoreRow& row) {
  if (!real_ok_) return;
  const std::optional<ScoreRow> real = real_scores_of(run_dir_, row.net, row.n);
  if (!real) return;
  try {
    if (!real_steps_) real_steps_ = io::tagged_steps(view_dir(run_dir_) + "/real_test", "eval/");
    if (!real_steps_->insert(row.iteration).second) return;
    if (!real_.enabled()) real_.open();
    real_.scalars(row.iteration, score_scalars(*real));
  } catch (const Error&) {
    real_ok_ = false;
    throw;
  }
}

void ScoreEvents::add_missing(std::vector<ScoreRow> rows, TensorBoardLog* rows_to, int64_t just_scored) {
  if (!samples_ok_ && !rows_to) return;
  std::set<int64_t> have;
  try {
    have = io::tagged_steps(view_dir(run_dir_), "eval/");
  } catch (const Error&) {
    samples_ok_ = false;
    throw;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ScoreRow& a, const ScoreRow& b) { return a.iteration < b.iteration; });
  for (const ScoreRow& r : rows) {
    if (have.insert(r.iteration).second || r.iteration == just_scored) write_row(r, rows_to);
    add_real(r);
  }
}

}  // namespace hamgan::eval
