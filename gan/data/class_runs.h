// An epoch order in runs of one class: every `run` consecutive positions hold images of one
// label, so a batch that is a multiple of `run` holds whole runs. The minibatch standard
// deviation (layers/minibatch_std.h) over such a run measures variety within a class, which a
// group of mixed classes hides behind the variety between them (train.class_group).
#pragma once
#include <cstdint>
#include <vector>

namespace hamgan {

// labels[i]: image i's class in [0, classes), or negative for an image to leave out (undecodable).
// Each class's images are shuffled and cut into runs; the runs are shuffled. A class's last
// images that fill no run are left out of this epoch (each epoch's shuffle leaves out others).
// Deterministic in (labels, run, seed). run >= 1; run 1 is a plain shuffle of the kept images.
std::vector<int64_t> class_run_order(const std::vector<int32_t>& labels, int64_t classes, int64_t run,
                                     uint64_t seed);

}  // namespace hamgan
