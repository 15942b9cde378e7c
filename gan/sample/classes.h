// Which classes to sample: "all" or a comma list of class indices ("0,3,7").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hamgan::sample {

// Sorted as given, duplicates rejected; every index must be in [0, n_classes).
std::vector<int64_t> parse_classes(const std::string& spec, int64_t n_classes);

}  // namespace hamgan::sample
