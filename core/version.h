// hamgan's version (Semantic Versioning 2.0.0: the major part changes when a config key, a CLI
// flag or an output format changes incompatibly). `hamgan info --json` reports it.
#pragma once

namespace hamgan {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace hamgan
