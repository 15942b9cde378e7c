#include "gan/sample/plan.h"

#include <algorithm>

#include "core/error.h"

namespace hamgan::sample {

std::vector<SampleItem> make_plan(const std::vector<int64_t>& classes, int64_t n, int64_t per_class) {
  if (classes.empty()) fail("sample plan: no classes selected");
  const int64_t c = static_cast<int64_t>(classes.size());
  if (per_class < 0) fail("--per-class ", per_class, ": expected >= 1");
  if (per_class > 0 && n > 0) fail("-n ", n, " and --per-class ", per_class, ": give one of them (-n is split over the classes)");
  if (per_class == 0 && n < 1) fail("-n ", n, ": expected >= 1 (or give --per-class K)");
  if (per_class > kMaxSamples / c)
    fail("--per-class ", per_class, " x ", c, " classes: expected at most ", kMaxSamples,
         " images per command (run again with another --seed for more)");
  if (per_class == 0 && n > kMaxSamples)
    fail("-n ", n, ": expected at most ", kMaxSamples, " images per command (run again with another --seed for more)");
  std::vector<SampleItem> out;
  for (int64_t j = 0; j < c; ++j) {
    const int64_t count = per_class > 0 ? per_class : n / c + (j < n % c ? 1 : 0);
    for (int64_t k = 0; k < count; ++k) out.push_back({classes[j], k});
  }
  return out;
}

std::vector<SampleItem> all_classes_plan(int64_t n_classes, int64_t n) {
  std::vector<int64_t> classes(static_cast<size_t>(std::max<int64_t>(n_classes, 0)));
  for (size_t c = 0; c < classes.size(); ++c) classes[c] = static_cast<int64_t>(c);
  return make_plan(classes, n, 0);
}

}  // namespace hamgan::sample
