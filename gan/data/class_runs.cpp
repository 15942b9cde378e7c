#include "gan/data/class_runs.h"

#include <random>
#include <utility>

#include "core/error.h"

namespace hamgan {

namespace {

// Fisher-Yates with our own index draw: std::shuffle differs between standard libraries.
template <typename T>
void shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

}  // namespace

std::vector<int64_t> class_run_order(const std::vector<int32_t>& labels, int64_t classes, int64_t run,
                                     uint64_t seed) {
  if (run < 1 || classes < 1) fail("class runs: expected run >= 1 and classes >= 1, got ", run, " and ", classes);
  std::vector<std::vector<int64_t>> by_class(static_cast<size_t>(classes));
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0) continue;
    if (labels[i] >= classes) fail("class runs: image ", i, " has label ", labels[i], ", expected < ", classes);
    by_class[static_cast<size_t>(labels[i])].push_back(static_cast<int64_t>(i));
  }
  std::mt19937_64 rng(seed);
  std::vector<std::pair<int32_t, size_t>> runs;  // (class, first index into its shuffled list)
  for (size_t c = 0; c < by_class.size(); ++c) {
    shuffle(by_class[c], rng);
    for (size_t k = 0; k + static_cast<size_t>(run) <= by_class[c].size(); k += static_cast<size_t>(run))
      runs.emplace_back(static_cast<int32_t>(c), k);
  }
  shuffle(runs, rng);
  std::vector<int64_t> order;
  order.reserve(runs.size() * static_cast<size_t>(run));
  for (const auto& [c, k] : runs)
    for (int64_t j = 0; j < run; ++j) order.push_back(by_class[static_cast<size_t>(c)][k + static_cast<size_t>(j)]);
  return order;
}

}  // namespace hamgan
