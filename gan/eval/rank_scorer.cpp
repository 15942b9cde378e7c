#include "gan/eval/rank_scorer.h"

#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "core/error.h"
#include "core/rng_scope.h"
#include "gan/eval/eval_spec.h"
#include "gan/eval/rank_share.h"
#include "gan/eval/score.h"
#include "gan/eval/score_inputs.h"
#include "gan/eval/train_scorer.h"

namespace hamgan::eval {

namespace {

class RankScorer {
 public:
  RankScorer(const Config& cfg, const std::string& run_dir, torch::Device device) {
    EvalSettings j = eval_spec_from_config(cfg, run_dir).settings;
    j.device = j.sampler.device = device;  // this rank's own GPU, as training uses
    const RngScope rng(j.device, kScoringSeed);
    net_ = make_feature_net(j, &cfg);
    n_ = sample_count(j, cfg);
    sampler_ = j.sampler;
    quantize_ = j.quantize;
    logits_ = wants_logits(*net_, j.metrics);
  }

  void operator()(const EvalRanks& ranks) {
    for (std::string word = ranks.hear(); word != kScoresDone; word = ranks.hear()) {
      const std::string path = sampled_checkpoint(word);
      if (path.empty()) fail("rank ", ranks.rank, ": rank 0 said '", word, "' during a score; expected a checkpoint");
      const RngScope rng(sampler_.device, kScoringSeed);
      std::optional<CheckpointData> c;
      try {
        c = load_checkpoint(path, sampler_.device);
      } catch (const std::exception& e) {  // another machine's disk: rank 0 samples this share
        std::cerr << "rank " << ranks.rank << ": " << e.what() << "\n";
      }
      std::ostringstream notes;  // rank 0 says them
      shared_sample_features(c ? &*c : nullptr, n_, sampler_, *net_, quantize_, logits_, ranks, notes);
    }
  }

 private:
  std::unique_ptr<metrics::FeatureNet> net_;
  int64_t n_ = 0;
  sample::SamplerOptions sampler_;
  bool quantize_ = true, logits_ = false;
};

}  // namespace

EvalHook make_rank_scorer(const Config& cfg, const std::string& run_dir, torch::Device device) {
  auto r = std::make_shared<RankScorer>(cfg, run_dir, device);
  return [r](int64_t, const std::string&, const PhaseProgress::Say&, TensorBoardLog*, const EvalRanks& ranks) {
    (*r)(ranks);
  };
}

}  // namespace hamgan::eval
