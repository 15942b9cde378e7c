// Which n of a data source's images a statistic uses: never the first n in path
// order, which in an ImageNet-style folder is 2 of 10 classes. With every label known the
// subset is class-balanced: classes take turns (in class order), each giving its next image of a
// seeded shuffle, so class counts differ by at most one where every class has enough images.
// Without labels: a seeded uniform sample. Indices come back sorted (sequential reads).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gan/data/dataset.h"

namespace hamgan {

struct Subset {
  std::vector<int64_t> indices;
  std::string description;  // e.g. "300 of 1500 images, class-balanced (30 per class, 10 classes), seed 0"
};

// n of `count` items whose labels label_of(i) gives (Dataset's kLabel* values as there);
// n <= 0 or n >= count: every item ("all 1500 images").
Subset choose_subset(int64_t count, const std::function<int32_t(int64_t)>& label_of, int64_t n, uint64_t seed);
// A data source's images, labels from Dataset::label.
Subset choose_subset(const Dataset& d, int64_t n, uint64_t seed);

// The images of `s` as a data source of their own (data.limit), in index order.
std::shared_ptr<Dataset> subset_dataset(std::shared_ptr<Dataset> base, Subset s);

}  // namespace hamgan
