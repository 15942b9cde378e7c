#include "gan/eval/eval_spec.h"

#include "core/error.h"
#include "gan/train/distributed.h"

namespace hamgan::eval {

EvalSpec eval_spec_from_config(const Config& cfg, const std::string& run_dir) {
  const EvalConfig& e = cfg.eval;
  EvalSpec spec;
  spec.form = ScoreRun{run_dir, /*while_training=*/true};
  EvalSettings& s = spec.settings;
  s.features = e.features;
  s.real = e.real.empty() ? cfg.data.path : e.real;
  if (e.real.empty()) s.format = cfg.data.format;
  s.device = train_device(word_of(cfg.train.device, kDeviceWords));
  s.sampler.device = s.device;
  s.n = e.n;  // samples, and at most as many real images (real_n 0)
  s.metrics = parse_metrics(e.metrics, "eval.metrics");
  s.keys.real = e.real.empty() ? "data.path" : "eval.real";
  s.keys.features = "eval.features";
  s.keys.metrics = "eval.metrics";
  s.keys.n = "eval.n";
  return spec;
}

void check_settings(const EvalSettings& s) {
  if (s.n < 0) fail(s.keys.n, " ", s.n, ": expected >= 0 (0: all, or the config's eval.fid_n)");
  if (s.real_n < 0) fail(s.keys.real_n, " ", s.real_n, ": expected >= 0");
  if (s.batch < 1) fail(s.keys.batch, " ", s.batch, ": expected >= 1");
  if (s.workers < 1 || s.workers > 256) fail(s.keys.workers, ": expected 1..256, got ", s.workers);
  // The bounds gan/data/open_dataset.cpp reads images within, named by the flag here.
  if (s.resolution && (*s.resolution < 8 || *s.resolution > 1024))
    fail(s.keys.resolution, " ", *s.resolution, ": expected 8..1024 (the size data sources are read at)");
  if (s.channels != 0 && s.channels != 1 && s.channels != 3)
    fail(s.keys.channels, " ", s.channels, ": expected 1 or 3 (0: the classifier's, else 1 for fmnist, else 3)");
}

}  // namespace hamgan::eval
