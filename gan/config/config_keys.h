// The key table of each config section (core/config_keys.h): one row per key of config.h's
// structs, in the order the resolved config lists them. Adding a key: a struct field and a row.
#pragma once
#include "core/config_keys.h"
#include "gan/config/config.h"

namespace hamgan {

const KeyTable<ModelConfig>& model_keys();
const KeyTable<GeneratorConfig>& generator_keys();
const KeyTable<DiscriminatorConfig>& discriminator_keys();
const KeyTable<TrainConfig>& train_keys();
const KeyTable<DataConfig>& data_keys();
const KeyTable<EvalConfig>& eval_keys();

}  // namespace hamgan
