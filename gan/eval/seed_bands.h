// Curves with error bands over seeds, as one SVG figure (written as text: no plotting library):
// two panels, class accuracy and FID against iteration; per group (gan/eval/seed_table.h) the
// mean over its seeds at every scored iteration that all its seeds have, and a band of +- one
// standard deviation (n - 1) where it has two seeds or more.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gan/eval/seed_stats.h"
#include "gan/eval/seed_table.h"
#include "io/output_path.h"

namespace hamgan::eval {

struct BandPoint {
  int64_t iteration;
  MeanSd value;
};
// Per group, the points of `metric` ("class_acc" or "fid") at iterations >= from that every
// seed has; iterations whose mean is NaN are left out.
std::vector<std::vector<BandPoint>> seed_curves(const std::vector<SeedGroup>& groups, const std::string& metric,
                                                int64_t from);

// An SVG of write_seed_bands (recognised by its first line).
const io::OutputKind& seed_bands_output();
// The figure, written atomically.
void write_seed_bands(const std::vector<SeedGroup>& groups, const std::string& svg_path, int64_t from);

}  // namespace hamgan::eval
