// D's outputs on images it trained on, on images it never saw, and on G's: when D
// memorises its training set, mean D(x) on the training split climbs away from mean D(x) on
// held-out images (the diagnosis of Karras et al. 2020, "Training GANs with limited data",
// Fig. 1b). `hamgan dgap --run DIR` writes one row per checkpoint to DIR/d_gap.csv.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gan/checkpoint/checkpoint.h"
#include "gan/data/dataset.h"

namespace hamgan::eval {

struct DGapRow {
  int64_t iteration = 0;
  double d_train = 0, d_test = 0, d_fake = 0;  // means of D's raw output
  int64_t n = 0;                                // images of each kind
  double gap() const { return d_train - d_test; }
};

// D of checkpoint `c` on the first n of a fixed shuffle (seed 0) of each split, with their true
// labels, and on n images of the live G (training mode, as D meets them; latents, labels and
// the global RNG seeded 0).
DGapRow d_gap(const CheckpointData& c, const Dataset& train, const Dataset& test, int64_t n, torch::Device device);

// Every checkpoint of run_dir, oldest first, into run_dir/d_gap.csv (an earlier d_gap.csv is
// replaced whole; any other file of that name is refused before any work). The splits
// come from the run's config (data.path); a source without a test split is an error.
std::vector<DGapRow> d_gap_run(const std::string& run_dir, int64_t n, torch::Device device);

}  // namespace hamgan::eval
