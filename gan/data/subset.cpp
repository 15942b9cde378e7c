#include "gan/data/subset.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

namespace hamgan {

namespace {

std::vector<int64_t> seeded_shuffle(std::vector<int64_t> v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
  return v;
}

Subset choose_uniform_subset(int64_t count, int64_t n, uint64_t seed, const std::string& what) {
  Subset s;
  s.indices.resize(static_cast<size_t>(count));
  std::iota(s.indices.begin(), s.indices.end(), 0);
  if (n <= 0 || n >= count) {
    s.description = "all " + std::to_string(count) + " " + what;
    return s;
  }
  s.indices = seeded_shuffle(std::move(s.indices), seed);
  s.indices.resize(static_cast<size_t>(n));
  std::sort(s.indices.begin(), s.indices.end());
  s.description = std::to_string(n) + " of " + std::to_string(count) + " " + what + ", uniformly at random, seed " +
                  std::to_string(seed);
  return s;
}

}  // namespace

Subset choose_subset(int64_t count, const std::function<int32_t(int64_t)>& label_of, int64_t n, uint64_t seed) {
  if (n <= 0 || n >= count) return choose_uniform_subset(count, n, seed, "images");
  std::map<int32_t, std::vector<int64_t>> by_class;
  for (int64_t i = 0; i < count; ++i) {
    const int32_t y = label_of(i);
    if (y == Dataset::kLabelUnknown) return choose_uniform_subset(count, n, seed, "images (labels unknown)");
    if (y >= 0) by_class[y].push_back(i);  // an undecodable image is never drawn
  }
  std::vector<std::vector<int64_t>> queues;
  for (auto& kv : by_class) queues.push_back(seeded_shuffle(std::move(kv.second), seed + static_cast<uint64_t>(kv.first)));
  int64_t available = 0;
  for (const auto& q : queues) available += static_cast<int64_t>(q.size());
  n = std::min(n, available);
  Subset s;
  std::vector<size_t> next(queues.size(), 0);
  while (static_cast<int64_t>(s.indices.size()) < n)
    for (size_t c = 0; c < queues.size() && static_cast<int64_t>(s.indices.size()) < n; ++c)
      if (next[c] < queues[c].size()) s.indices.push_back(queues[c][next[c]++]);
  std::sort(s.indices.begin(), s.indices.end());
  const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(queues.size()));
  s.description = std::to_string(n) + " of " + std::to_string(count) + " images, class-balanced (" +
                  (n % k == 0 ? std::to_string(n / k) : std::to_string(n / k) + "-" + std::to_string(n / k + 1)) +
                  " per class, " + std::to_string(k) + " classes), seed " + std::to_string(seed);
  return s;
}

Subset choose_subset(const Dataset& d, int64_t n, uint64_t seed) {
  return choose_subset(d.size(), [&d](int64_t i) { return d.label(i); }, n, seed);
}

namespace {
class SubsetDataset : public Dataset {
 public:
  SubsetDataset(std::shared_ptr<Dataset> base, Subset s) : base_(std::move(base)), s_(std::move(s)) {}
  int64_t size() const override { return static_cast<int64_t>(s_.indices.size()); }
  const std::vector<std::string>& class_names() const override { return base_->class_names(); }
  int64_t resolution() const override { return base_->resolution(); }
  int64_t channels() const override { return base_->channels(); }
  bool get(int64_t i, uint8_t* pixels, int32_t& label) const override { return base_->get(at(i), pixels, label); }
  int32_t label(int64_t i) const override { return base_->label(at(i)); }
  std::vector<std::string> source_files() const override { return base_->source_files(); }

 private:
  int64_t at(int64_t i) const { return s_.indices.at(static_cast<size_t>(i)); }
  std::shared_ptr<Dataset> base_;
  Subset s_;
};
}  // namespace

std::shared_ptr<Dataset> subset_dataset(std::shared_ptr<Dataset> base, Subset s) {
  return std::make_shared<SubsetDataset>(std::move(base), std::move(s));
}

}  // namespace hamgan
