// Whether a checkpoint can resume under a config: the keys the models' tensors are built from
// must be equal (OnResume::Model), and those the optimizers' state or the data's order depend on
// (OnResume::Keep); any other key may change at a resume (gan/config/config_keys.cpp's rows).
#pragma once
#include <string>
#include <vector>

#include "gan/config/config.h"

namespace hamgan {

// "  section.key: checkpoint A, now B" for every leaf of the keys the models' tensors are built
// from (their table rows say OnResume::Model: model, generator, discriminator) where `stored`
// and `now` differ.
std::vector<std::string> model_differences(const Config& stored, const Config& now);

// Fails naming every differing key when those keys differ, then naming a key whose row says
// OnResume::Keep (the optimizers' state or the data's order depends on it) when it differs.
// `run_config`: the run's config.yaml, named in the error as what to resume with.
void check_resume_compatible(const Config& stored, const Config& now, const std::string& what,
                             const std::string& run_config = "");

}  // namespace hamgan
