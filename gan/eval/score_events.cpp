#include "gan/eval/score_events.h"

#include <filesystem>
#include <optional>

#include "gan/eval/real_scores.h"
#include "metrics/metric.h"

namespace hamgan::eval {

std::vector<std::pair<std::string, double>> score_scalars(const ScoreRow& row) {
  std::vector<std::pair<std::string, double>> scalars;
  for (const auto& name : metrics::table_metric_names()) scalars.emplace_back("eval/" + name, row.value(name));
  return scalars;
}

namespace {
bool has_view(const std::string& run_dir) {
  std::error_code ec;
  return std::filesystem::is_directory(std::filesystem::path(run_dir) / "tensorboard", ec);
}
}  // namespace

ScoreEvents::ScoreEvents(std::string run_dir)
    : run_dir_(std::move(run_dir)),
      view_(has_view(run_dir_)),
      samples_(run_dir_, view_),
      real_(run_dir_, view_, "real_test") {}

void ScoreEvents::add(const ScoreRow& row) {
  if (!view_) return;
  if (!samples_.enabled()) samples_.open();
  samples_.scalars(row.iteration, score_scalars(row));
  add_real(row);
}

void ScoreEvents::add_real(const ScoreRow& row) {
  if (!view_) return;
  const std::optional<ScoreRow> real = real_scores_of(run_dir_, row.net, row.n);
  if (!real) return;
  if (!real_.enabled()) real_.start(row.iteration);
  real_.scalars(row.iteration, score_scalars(*real));
}

}  // namespace hamgan::eval
