// The step-feature registry: adding a feature is its own file plus one entry here (its name, its
// statistics as metrics.jsonl key / progress label / words in errors, the train.* that turns it
// on, its factory). The order is the order the step calls them (the augmentations first: the
// regularisers see D's outputs on the augmented images; DiffAugment's T, then ADA's) and the order of their statistics in
// every record.
#include "core/error.h"
#include "gan/train/ada.h"
#include "gan/train/diff_augment.h"
#include "gan/train/lecam.h"
#include "gan/train/mode_seeking.h"
#include "gan/train/r1.h"
#include "gan/train/step_feature.h"

namespace hamgan {

const std::vector<StepFeatureEntry>& step_feature_registry() {
  static const std::vector<StepFeatureEntry> entries = {
      {"diffaug", {}, [](const TrainConfig& t) { return t.diffaug.any(); }, make_diff_augment_feature},
      {"ada", {{"ada_p", "p", "ADA's augmentation probability"}, {"ada_rt", "rt", "ADA's r_t = E[sign(D(real))]"}},
       [](const TrainConfig& t) { return t.ada.any(); }, make_ada_feature},
      {"lecam", {{"d_lecam", "LeCam", "LeCam term (before its weight)"}},
       [](const TrainConfig& t) { return t.lecam_weight > 0; }, make_lecam_feature},
      {"r1", {{"d_r1", "R1", "R1 penalty (before gamma / 2)"}},
       [](const TrainConfig& t) { return t.r1_gamma > 0; }, make_r1_feature},
      {"r2", {{"d_r2", "R2", "R2 penalty (before gamma / 2)"}},
       [](const TrainConfig& t) { return t.r2_gamma > 0; }, make_r2_feature},
      {"mode_seeking", {{"g_ms", "MS", "mode-seeking term (before its weight)"}},
       [](const TrainConfig& t) { return t.mode_seeking > 0; }, make_mode_seeking_feature},
  };
  return entries;
}

std::vector<std::unique_ptr<StepFeature>> create_step_features(const Config& cfg, torch::Device device) {
  std::vector<std::unique_ptr<StepFeature>> on;
  for (const StepFeatureEntry& e : step_feature_registry())
    on.push_back(e.enabled(cfg.train) ? e.create(cfg, device) : nullptr);
  return on;
}

const std::vector<StatName>& stat_names() {
  static const std::vector<StatName> names = [] {
    std::vector<StatName> n(std::begin(kStepStatNames), std::end(kStepStatNames));
    for (const StepFeatureEntry& e : step_feature_registry()) n.insert(n.end(), e.stats.begin(), e.stats.end());
    return n;
  }();
  return names;
}

int64_t stat_index(const std::string& key) {
  const std::vector<StatName>& names = stat_names();
  std::string known;
  for (size_t i = 0; i < names.size(); ++i) {
    if (key == names[i].key) return static_cast<int64_t>(i);
    known += (known.empty() ? "" : ", ") + std::string(names[i].key);
  }
  fail("unknown training statistic '", key, "' (known: ", known, ")");
}

}  // namespace hamgan
