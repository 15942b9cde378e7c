// What one evaluation is: its form (what is scored, or the reference statistics made) and the
// settings every form shares (feature network, reference, counts, metrics, batch, sampling).
// One builder makes it (build_eval_spec) from an EvalRequest, which `hamgan fid` fills from its
// flags (gan/cli/fid.cpp) and the in-training scorer from the config's eval: section
// (eval_spec_from_config); gan/eval/evaluate.h runs it. Each setting carries the name of the
// flag or key that gave it, so an error names what the user wrote.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "gan/config/config.h"
#include "gan/eval/metric_set.h"
#include "gan/sample/sampler.h"

namespace hamgan::eval {

// The forms. Each scores against EvalSettings::real, or makes a reference.
struct ScoreCheckpoint {  // samples drawn on the fly from one checkpoint, printed
  std::string path;
};
struct ScoreRun {  // every unscored checkpoint of a run, into DIR/scores.csv and scores.png
  std::string dir;
  bool while_training = false;  // by the in-training scorer, one checkpoint at a time as they are written
};
struct ScoreFolder {  // an image directory (`hamgan sample`'s layout or flat)
  std::string dir;
};
// The real data source's test split scored as samples are, against its training images: the
// figures real images reach in these features, which a GAN's are read against.
struct ScoreTestSplit {};
struct MakeReference {  // reference statistics (.npz) of an image directory or a data source
  enum class From { ImageDir, DataSource } from = From::DataSource;
  std::string source, out;
};
using EvalForm = std::variant<ScoreCheckpoint, ScoreRun, ScoreFolder, ScoreTestSplit, MakeReference>;

// The flag or config key that set each setting, for messages (build_eval_spec fills them).
struct EvalKeys {
  std::string real, features, metrics, n, real_n, resolution, channels, batch, workers;
};

struct EvalSettings {
  // The reference: ref.npz, an image directory or a data source (MakeReference: unused).
  std::string real;
  DataFormat format = DataFormat::Auto;  // data source format of the reference / MakeReference's source
  // Feature network: a domain classifier (also class accuracy), else Inception weights from
  // `inception` > $HAMGAN_INCEPTION > eval.inception of `inception_config` (else of the
  // checkpoint's stored config).
  std::string features, inception, inception_config;
  std::string resize = "torch";  // torch (pytorch-fid) | tf (torch-fidelity)
  bool channels_last = false;
  torch::Device device = torch::kCPU;
  // Counts and reading.
  int64_t batch = 50;
  int64_t n = 0;       // images (first N sorted by path; 0 all) or, scoring samples, samples (0: eval.fid_n)
  int64_t real_n = 0;  // scoring samples: real images (0: as many as samples, or all if fewer)
  std::optional<int64_t> resolution;  // data sources read at this size (default: the classifier's, the GAN's, 32)
  int64_t channels = 0;               // 0: the classifier's, else 1 for fmnist, else 3
  int64_t workers = 2;
  // Scores.
  MetricSet metrics;         // registry names; fid always
  bool all_metrics = false;  // every metric that this network and reference allow, not an error for the rest
  bool quantize = true;      // samples through 8 bit, as `hamgan sample` writes them
  sample::SamplerOptions sampler;  // device, seed, EMA, ... of the drawn samples
  EvalKeys keys;
};

struct EvalSpec {
  EvalForm form;
  EvalSettings settings;
};

// A setting as the user gave it: its value and the flag or config key that gave it.
template <class T>
struct Given {
  T value;
  std::string key;
};

// What is asked, as given: by `hamgan fid`'s flags (the defaults are theirs, and so are the
// names) or by the config's eval: section. The metric list is still text, read by the builder.
struct EvalRequest {
  EvalForm form;
  Given<std::string> real{"", "--real"}, features{"", "--features"};
  DataFormat format = DataFormat::Auto;
  std::string inception, inception_config, resize = "torch";
  bool channels_last = false;
  torch::Device device = torch::kCPU;
  Given<int64_t> batch{50, "--batch"}, n{0, "-n"}, real_n{0, "--real-n"}, channels{0, "--channels"};
  Given<int64_t> workers{2, "--workers"};
  Given<std::optional<int64_t>> resolution{std::nullopt, "--resolution"};
  Given<std::string> metrics{"fid", "--metrics"};  // a comma list of registry names
  bool all_metrics = false;  // --all: every table metric, the list unread
  bool quantize = true;
  sample::SamplerOptions sampler;  // of drawn samples; its device is `device`
};

// The one builder of an EvalSpec: the request's values, each with the name that gave it, and
// the metric list read (errors naming its flag or key). Ranges are check_settings' (run by
// check_request, before anything is read).
EvalSpec build_eval_spec(const EvalRequest& r);

// The in-training scorer's request for the run in `run_dir`, built: eval.features, eval.real
// (else the training data, read as the GAN's images), eval.n samples and real images,
// eval.metrics, on the training device; errors name those keys.
EvalSpec eval_spec_from_config(const Config& cfg, const std::string& run_dir);

// Fails on settings no form can use (negative counts, a zero batch, a resolution or channel count
// no image is read at), naming the flag or key, before anything is read.
void check_settings(const EvalSettings& s);

}  // namespace hamgan::eval
