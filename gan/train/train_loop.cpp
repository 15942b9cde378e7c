// The run around the step (train()): the run directory (lock, checkpoints, grids), the reporter,
// the stop policy and the scorer, top to bottom in one loop.
#include <filesystem>
#include <optional>

#include "core/error.h"
#include "gan/train/distributed.h"
#include "gan/train/init_from.h"
#include "gan/train/lr_schedule.h"
#include "gan/train/reporter.h"
#include "gan/train/run_dir.h"
#include "gan/train/stop_policy.h"
#include "gan/train/train_hooks.h"
#include "gan/train/trainer.h"
#include "io/tensorboard_log.h"

namespace hamgan {

namespace fs = std::filesystem;

namespace {
bool every(int64_t interval, int64_t iteration) { return interval > 0 && iteration % interval == 0; }

// Gloo's own words ("Connection reset by peer") do not say that a rank is gone or what is kept.
[[noreturn]] void fail_lost_ranks(const DataParallel& dp, int64_t iteration, const RunDir& dir,
                                  const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  fail("rank ", dp.rank(), " of ", dp.world_size(), " lost the other ranks during iteration ", iteration + 1,
       " (one of them died or was killed?): ", c10 ? c10->what_without_backtrace() : e.what(), "; ",
       dir.last_checkpoint() >= 0 ? "the last checkpoint, " + dir.checkpoint_path(dir.last_checkpoint()) +
                                        ", is kept: run again to resume from it"
                                  : std::string("no checkpoint was written yet"));
}
}  // namespace

TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source) {
  return train(cfg, opt, make_source, TrainHooks{});
}

// One call: the run directory (lock, checkpoints, grids), the reporter and the stop policy
// around the loop. Only the lead rank writes and prints; every rank keeps the same schedule
// (and the same collectives).
TrainResult train(const Config& cfg, const TrainOptions& opt, const SourceFactory& make_source,
                  const TrainHooks& hooks) {
  const TrainConfig& tc = cfg.train;
  // Adam's states come from train.init_from's checkpoint: without one there is nothing to take.
  if (tc.init_optimizer && tc.init_from.empty())
    fail(cfg.source, ": train.init_optimizer=true takes Adam's states from train.init_from's checkpoint, but "
         "train.init_from is not set; set train.init_from=CHECKPOINT, or leave train.init_optimizer false");
  const bool lead = !opt.dp || opt.dp->rank() == 0;
  RunDir dir(opt.out_dir, lead);
  Reporter report(cfg, opt.out, lead, opt.dp ? opt.dp->world_size() : 1, hooks.history);
  const torch::Device device =
      opt.device ? *opt.device
                 : train_device(word_of(tc.device, kDeviceWords), opt.dp ? opt.dp->local_rank() : -1, -1,
                                tc.dist_backend);
  StopPolicy stop(tc.time_limit_minutes, opt.handle_signals, opt.dp, /*agree_every_step=*/!device.is_cuda());
  // train.init_from is read before a new run's config.yaml is written: a bad file leaves nothing.
  std::optional<CheckpointData> init;
  const auto new_run = [&dir] {
    const fs::path ckpts = fs::path(dir.path()) / "checkpoints";
    return !fs::exists(ckpts) || checkpoint_files(ckpts.string()).empty();
  };
  if (!tc.init_from.empty() && new_run()) init = load_checkpoint(tc.init_from);
  // The checkpoint before the models: a config that would change them fails at once.
  const std::optional<CheckpointData> resumed = dir.resume(cfg, device, report.out(), opt.class_names);
  if (resumed) check_resume_compatible(resumed->config, cfg, resumed->path, dir.path() + "/config.yaml");
  Trainer t(cfg, device);
  if (resumed) t.restore(*resumed);
  if (resumed && cfg.train.ema && !resumed->has_ema)
    report.out() << "note: " << resumed->path << " has no EMA generator (train.ema was off): the EMA G starts "
                 << "from G's weights\n";
  if (resumed && !tc.init_from.empty())
    report.out() << "train.init_from " << tc.init_from << " is not used: this run resumes from its own checkpoint "
                 << resumed->path << "\n";
  if (!resumed && !tc.init_from.empty()) {
    if (!init) init = load_checkpoint(tc.init_from);  // only damaged checkpoints were there
    log_init_from(report.out(), *init, cfg.model.n_classes, init_from_checkpoint(t, *init, tc.init_optimizer),
                  tc.init_optimizer);
    t.carry_feature_state(*init, report.out());
  }
  report.banner(t, resumed, dir);
  if (opt.dp) t.set_data_parallel(opt.dp);
  const PhaseProgress::Say say = [&report](const std::string& w) { report.message(w); };
  t.set_say(say);
  dir.set_say(say);
  const std::unique_ptr<BatchSource> source = make_source(t.micro_batch(), resumed ? resumed->loader : LoaderState{});
  stop.start();
  report.start(t, dir);
  // The scorer's rows go to the loop's own TensorBoard file, beside train/<key>.
  TensorBoardLog* const view = report.tensorboard().enabled() ? &report.tensorboard() : nullptr;
  const EvalRanks ranks = eval_ranks(opt.dp);  // every rank samples its share of a score

  TrainOutcome outcome = TrainOutcome::Finished;
  const int64_t first_it = t.iteration() + 1;  // reported at once: a slow step is not silence
  int64_t last_eval = -1;
  try {
    while (t.iteration() < tc.iterations) {
      t.set_lr_scale(lr_scale(tc, budget_progress(tc, t.iteration(), stop.elapsed_s())));
      t.step(*source);
      report.add(t);
      if (hooks.after_step) hooks.after_step(t);
      const int64_t it = t.iteration();
      const bool eval_point = opt.eval && every(cfg.eval.every, it);
      const bool checkpoint_point = every(tc.checkpoint_every, it) || eval_point;
      // Every point that writes a checkpoint reports first: the NaN check keeps a diverged model
      // out of the checkpoints (and its last good one from pruning).
      const bool report_point = it == first_it || every(tc.log_every, it) || checkpoint_point;
      const std::optional<TrainOutcome> stopping = stop.check(report_point);
      if (report_point || stopping) report.report(t, stop, dir);
      if (every(tc.sample_every, it)) report.tensorboard().image(it, "samples", dir.save_grid(t));
      if (checkpoint_point) dir.save_checkpoint(t, source->state(), tc.keep_checkpoints);
      if (eval_point) opt.eval(it, dir.checkpoint_path(it), say, view, ranks);
      if (eval_point) last_eval = it;
      if (stopping) {
        outcome = *stopping;
        break;
      }
    }
  } catch (const std::exception& e) {  // a collective failed: another rank died (kill -9, OOM)
    if (!opt.dp || dynamic_cast<const Error*>(&e)) throw;
    fail_lost_ranks(*opt.dp, t.iteration(), dir, e);
  }
  report.report(t, stop, dir);
  // The last iteration always leaves a checkpoint, and a grid unless a stop was requested: a
  // signal is answered within the step and the checkpoint write (standing statistics and a
  // 128 px grid take seconds more), the EMA G's standing statistics left to the loader.
  const bool interrupted = outcome == TrainOutcome::Interrupted;
  if (!interrupted && t.iteration() >= first_it && tc.sample_every > 0 && !every(tc.sample_every, t.iteration()))
    report.tensorboard().image(t.iteration(), "samples", dir.save_grid(t));  // a checkpoint point or not
  if (dir.last_checkpoint() != t.iteration())
    dir.save_checkpoint(t, source->state(), tc.keep_checkpoints, /*standing=*/!interrupted);
  // The end is scored too (the best checkpoint may be the last one), unless a stop was requested.
  if (opt.eval && cfg.eval.every > 0 && last_eval != t.iteration() && !interrupted)
    opt.eval(t.iteration(), dir.checkpoint_path(t.iteration()), say, view, ranks);
  report.finish(outcome, t, dir);
  return {outcome, t.iteration()};
}
}  // namespace hamgan
