// The training statistics' plot (gan/train/train_stats.h): DIR/metrics.png, redrawn from the
// log DIR/metrics.jsonl at every report (as `hamgan fid --run` redraws scores.png): the D
// losses on real and fake images and the G loss in one panel, the mean D(x) and D(G(z)) in a
// second, against iteration. When a resumed run restarts at an earlier iteration, the log's
// later records of the interrupted run are dropped.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "io/metrics_log.h"

namespace hamgan {

// Writes DIR/metrics.png (atomically); nothing when the log has no records.
void plot_train_stats(const std::string& run_dir);
// plot_train_stats for the trainer: a failure is passed to `warn` (once per process) instead of
// stopping training.
void redraw_train_stats_plot(const std::string& run_dir, const std::function<void(const std::string&)>& warn);

}  // namespace hamgan
