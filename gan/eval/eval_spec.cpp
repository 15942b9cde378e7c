#include "gan/eval/eval_spec.h"

#include "core/error.h"
#include "core/device.h"

namespace hamgan::eval {

EvalSpec build_eval_spec(const EvalRequest& r) {
  EvalSpec spec;
  spec.form = r.form;
  EvalSettings& s = spec.settings;
  EvalKeys& k = s.keys;
  s.real = r.real.value, k.real = r.real.key;
  s.features = r.features.value, k.features = r.features.key;
  s.format = r.format;
  s.inception = r.inception, s.inception_config = r.inception_config, s.resize = r.resize;
  s.channels_last = r.channels_last;
  s.device = r.device;
  s.batch = r.batch.value, k.batch = r.batch.key;
  s.n = r.n.value, k.n = r.n.key;
  s.real_n = r.real_n.value, k.real_n = r.real_n.key;
  s.resolution = r.resolution.value, k.resolution = r.resolution.key;
  s.channels = r.channels.value, k.channels = r.channels.key;
  s.workers = r.workers.value, k.workers = r.workers.key;
  s.metrics = r.all_metrics ? metrics::every_table_metric() : parse_metrics(r.metrics.value, r.metrics.key);
  s.all_metrics = r.all_metrics;
  k.metrics = r.metrics.key;
  s.quantize = r.quantize;
  s.sampler = r.sampler;
  s.sampler.device = r.device;
  return spec;
}

EvalSpec eval_spec_from_config(const Config& cfg, const std::string& run_dir) {
  const EvalConfig& e = cfg.eval;
  EvalRequest r;
  r.form = ScoreRun{run_dir, /*while_training=*/true};
  r.features = {e.features, "eval.features"};
  r.real = e.real.empty() ? Given<std::string>{cfg.data.path, "data.path"} : Given<std::string>{e.real, "eval.real"};
  if (e.real.empty()) r.format = cfg.data.format;
  r.device = resolve_device(word_of(cfg.train.device, kDeviceWords));
  r.n = {e.n, "eval.n"};  // samples, and at most as many real images (real_n 0)
  r.metrics = {e.metrics, "eval.metrics"};
  return build_eval_spec(r);
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
