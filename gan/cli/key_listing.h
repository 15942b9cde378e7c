// `hamgan info --keys`: every config key as its table row declares it (core/config_keys.h):
// each section's keys, each context module type's keys (layers/context/registry.cpp) and the
// metric names (metrics/registry.cpp). docs/configuration.md is rendered from the JSON form
// (scripts/config_reference.py).
#pragma once
#include <yaml-cpp/yaml.h>

#include <ostream>
#include <string>

namespace hamgan::cli {

// A resolved config value as JSON (`info --get KEY --json`, and the listing's defaults that are
// not numbers): a section an object, a list an array, a scalar a string as the config spells it
// (a script converts it as it would a value read from config.yaml), null where unset.
void write_config_json(std::ostream& o, const YAML::Node& n);

// {"sections": [{"name", "keys": [{"key", "type", "default", "range", "meaning", "resume"}]}],
//  "context_types": [{"name", "keys": [...]}], "metrics": [{"name", "better", "per_checkpoint", "help"}]}
std::string key_listing_json();
// The same for a reader: one key per line, its meaning indented below it.
std::string key_listing_text();

}  // namespace hamgan::cli
