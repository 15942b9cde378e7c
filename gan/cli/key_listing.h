// `hamgan info --keys`: every config key as its table row declares it (core/config_keys.h):
// each section's keys, each context module type's keys (layers/context/registry.cpp) and the
// metric names (metrics/registry.cpp). docs/configuration.md is rendered from the JSON form
// (scripts/config_reference.py).
#pragma once
#include <string>

namespace hamgan::cli {

// {"sections": [{"name", "keys": [{"key", "type", "default", "range", "meaning", "resume"}]}],
//  "context_types": [{"name", "keys": [...]}], "metrics": [{"name", "better", "per_checkpoint", "help"}]}
std::string key_listing_json();
// The same for a reader: one key per line, its meaning indented below it.
std::string key_listing_text();

}  // namespace hamgan::cli
