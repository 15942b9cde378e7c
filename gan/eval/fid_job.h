// What `hamgan fid` does, for every form (gan/cli/fid.cpp parses the flags into a FidJob):
//   stats:  reference statistics (.npz) of an image directory or data source;
//   --fake: FID (IS, KID with `all`) of an image directory against a reference;
//   --checkpoint: of samples drawn on the fly; --run: of every unscored checkpoint of a run,
//   into DIR/scores.csv and DIR/scores.png (gan/eval/score_table.h).
// Feature network: `features` (a domain classifier, also class accuracy), else Inception
// weights from `inception` > $HAMGAN_INCEPTION > eval.inception of `config` (else of the
// checkpoint's stored config).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gan/eval/metric_set.h"
#include "gan/eval/reference.h"
#include "gan/sample/sampler.h"

namespace hamgan::eval {

struct FidJob {
  // What to score, and against what.
  std::string real;                    // ref.npz, image directory or data source
  std::string fake, checkpoint, run;   // exactly one for fid_score
  std::string images, data, out;      // fid_stats: one of images/data, and out (.npz)
  // Feature network.
  std::string features, inception, config;
  std::string resize = "torch";       // torch (pytorch-fid) | tf (torch-fidelity)
  bool channels_last = false;
  torch::Device device = torch::kCPU;
  // Counts and reading.
  int64_t batch = 50;
  int64_t n = 0;       // images (first N sorted by path; 0 all) or, with checkpoint/run, samples (0: eval.fid_n)
  int64_t real_n = 0;  // with checkpoint/run: real images (0: as many as samples, or all if fewer)
  DataFormat format = DataFormat::Auto;  // data source format of --data / --real
  std::optional<int64_t> resolution;
  int64_t channels = 0;  // 0: the classifier's, else 1 for fmnist, else 3
  int workers = 2;
  // Scores.
  MetricSet metrics;       // registry names (--metrics, --all); fid always
  bool all_metrics = false;  // --all: every metric that this network and reference allow, not an error for the rest
  bool quantize = true;   // samples through 8 bit, as `hamgan sample` writes them
  sample::SamplerOptions sampler;
};

// The feature network of `job` (its --features classifier, else Inception, whose weights may
// come from `stored`, a checkpoint's config), announced on stderr.
std::unique_ptr<metrics::FeatureNet> make_feature_net(const FidJob& job, const Config* stored = nullptr);
// How to read the real side for `job` with n images, at the resolution of the classifier, else
// of `cfg`, else 32.
ReferenceOptions reference_options(const FidJob& job, int64_t n, const Config* cfg, const metrics::FeatureNet& net);
// Fails on negative counts and a zero batch before anything is read.
void check_fid_job(const FidJob& job);
// What the metrics of `job` can be here (its feature network, reference and form), naming the
// flags that asked.
MetricScope metric_scope(const FidJob& job);
// Fails, before anything is read, on every request `fid` could not honour: a metric the network,
// the reference or the form cannot give (MetricScope), intra-class FID without classes, --real-n
// with statistics or with --fake.
void check_fid_request(const FidJob& job);
void fid_stats(const FidJob& job);
void fid_score(const FidJob& job);

}  // namespace hamgan::eval
