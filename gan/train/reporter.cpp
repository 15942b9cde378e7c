#include "gan/train/reporter.h"

#include <cmath>
#include <iostream>

#include "core/cpu_features.h"
#include "core/error.h"
#include "gan/train/train_stats_plot.h"
#include "gan/train/run_dir.h"
#include "gan/train/trainer.h"
#include "io/metrics_log.h"

namespace hamgan {

namespace {

// metrics.jsonl's row as train/<key> scalars: the keys and values of progress.cpp's row.
std::vector<std::pair<std::string, double>> tensorboard_scalars(const TrainStats& m) {
  std::vector<std::pair<std::string, double>> v = {{"train/wall_s", m.wall_s}, {"train/d_loss", m.d_loss()}};
  const std::vector<StatName>& names = stat_names();
  for (size_t j = 0; j < names.size(); ++j) v.emplace_back(std::string("train/") + names[j].key, m.stat[j]);
  v.insert(v.end(), {{"train/g_lr", m.g_lr}, {"train/d_lr", m.d_lr}, {"train/it_s", m.it_s}, {"train/img_s", m.img_s}});
  return v;
}

}  // namespace


Reporter::Reporter(const Config& cfg, std::ostream* out, bool lead, int world, std::vector<IterStats>* history)
    : cfg_(cfg), lead_(lead), world_(world), history_(history), out_(!lead ? quiet_ : out ? *out : std::cout) {}

void Reporter::banner(const Trainer& t, const std::optional<CheckpointData>& resumed, const RunDir& dir) {
  if (resumed) out_ << "resuming from " << resumed->path << " (iteration " << resumed->iteration << ")\n";
  const auto& tc = cfg_.train;
  const torch::Device device = t.device();
  out_ << "training on " << device.str() << (device.is_cpu() ? " (" + cpu_isa_description() + ")" : std::string())
       << (t.amp() ? " with bf16 autocast" : " in fp32") << ", batch " << tc.batch_size
       << (world_ > 1 ? " per rank x " + std::to_string(world_) + " ranks" : std::string())
       << (tc.accumulate > 1 ? " (" + std::to_string(tc.accumulate) + " x " + std::to_string(t.micro_batch()) + ")"
                             : std::string())
       << ", to iteration " << tc.iterations
       << (tc.lr_decay == LrDecay::Linear
               ? "; lr linear to 0 from " + std::to_string(int(tc.lr_decay_from * 100 + 0.5)) + "% of the budget"
               : std::string())
       << "; output in " << dir.path() << std::endl;  // flushed: a pipe holds it until the first step otherwise
}

void Reporter::start(const Trainer& t, const RunDir& dir) {
  if (lead_) cut_train_stats_log(dir.path() + "/metrics.jsonl", t.iteration());  // a killed run's later records
  progress_.emplace(out_, lead_ ? dir.path() + "/metrics.jsonl" : "/dev/null");
  tensorboard_.emplace(dir.path(), lead_ && cfg_.train.tensorboard);
  tensorboard_->start(t.iteration() + 1);  // the first step this session writes
  t0_ = last_report_ = clock::now();
  last_report_it_ = t.iteration();
}

void Reporter::message(const std::string& text) {
  if (!lead_) return;
  if (progress_) progress_->message(text);
  else out_ << text << std::endl;
}

void Reporter::add(const Trainer& t) { pending_.push_back(t.stats()); }

void Reporter::report(const Trainer& t, const StopPolicy& stop, const RunDir& dir) {
  if (pending_.empty()) return;
  // host read: at report points only (log_every, checkpoints, the end), one copy for all the
  // steps since the last; the steps in between keep their stats on the device.
  const torch::Tensor s = torch::stack(pending_).cpu();
  const int64_t n = s.size(0), first = t.iteration() - n + 1;
  pending_.clear();
  const auto a = s.accessor<float, 2>();
  const std::vector<StatName>& names = stat_names();
  const int64_t n_stats = static_cast<int64_t>(names.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n_stats; ++j)
      if (!std::isfinite(a[i][j])) {
        progress_->finish();
        fail("training diverged: ", names[j].words, " is ", a[i][j], " at iteration ", first + i,
             "; stopped without checkpointing it (",
             dir.last_checkpoint() >= 0
                 ? "the last good checkpoint, " + dir.checkpoint_path(dir.last_checkpoint()) + ", is kept"
                 : std::string("no checkpoint was written"),
             ")");
      }
  if (history_)
    for (int64_t i = 0; i < n; ++i) {
      IterStats st(n_stats);
      for (int64_t j = 0; j < n_stats; ++j) st[j] = a[i][j];
      history_->push_back(st);
    }
  const torch::Tensor mean = s.mean(0).to(torch::kDouble);
  const auto now = clock::now();
  const double dt = std::chrono::duration<double>(now - last_report_).count();
  TrainStats m;
  m.iteration = t.iteration();
  m.total = cfg_.train.iterations;
  m.wall_s = std::chrono::duration<double>(now - t0_).count();
  m.it_s = dt > 0 ? (t.iteration() - last_report_it_) / dt : 0;
  m.img_s = m.it_s * cfg_.train.batch_size * world_ * cfg_.train.n_dis;  // real images seen by D, all ranks
  const auto mean_a = mean.accessor<double, 1>();
  for (int64_t j = 0; j < n_stats; ++j) m.stat.push_back(mean_a[j]);
  m.g_lr = cfg_.train.g_lr * t.lr_scale();
  m.d_lr = cfg_.train.d_lr * t.lr_scale();
  if (stop.time_limit_s() > 0) m.time_left_s = std::max(0.0, stop.time_limit_s() - m.wall_s);
  progress_->report(m);
  tensorboard_->scalars(m.iteration, tensorboard_scalars(m));
  announce_speed(t, m.it_s, stop);
  if (lead_) redraw_train_stats_plot(dir.path(), [this](const std::string& w) { progress_->message(w); });
  last_report_ = now;
  last_report_it_ = t.iteration();
}

// From the second report's rate over the interval since the first (that one holds the warm-up:
// allocations, oneDNN's kernel generation), so a user on a slower CPU knows at once what the
// budget costs there.
void Reporter::announce_speed(const Trainer& t, double it_s, const StopPolicy& stop) {
  if (++reports_ != 2 || it_s <= 0) return;
  const auto& tc = cfg_.train;
  const double to_end = (tc.iterations - t.iteration()) / it_s;
  const double limit_left = stop.time_limit_s() > 0 ? stop.time_limit_s() - stop.elapsed_s() : -1;
  std::ostringstream m;
  m.precision(3);
  m << "speed after warm-up: " << it_s << " it/s; iteration " << tc.iterations << " in about "
    << int(to_end / 60 + 0.5) << " min";
  if (limit_left >= 0 && limit_left < to_end)
    m << ", but train.time_limit_minutes (" << tc.time_limit_minutes << ") stops the run first, near iteration "
      << t.iteration() + int64_t(limit_left * it_s);
  progress_->message(m.str());
}

void Reporter::finish(TrainOutcome outcome, const Trainer& t, const RunDir& dir) {
  progress_->finish();
  const std::string where = dir.checkpoint_path(t.iteration());
  if (outcome == TrainOutcome::Interrupted)
    out_ << "stopped by signal " << StopPolicy::signal() << " after iteration " << t.iteration() << "; checkpoint "
         << where << " (run again to resume)\n";
  else if (outcome == TrainOutcome::TimeLimit)
    out_ << "time limit of " << cfg_.train.time_limit_minutes << " min reached at iteration " << t.iteration()
         << "; checkpoint " << where << "\n";
  else
    out_ << "finished at iteration " << t.iteration() << "; checkpoint " << where << "\n";
}

}  // namespace hamgan
