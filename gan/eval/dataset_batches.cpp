#include "gan/eval/dataset_batches.h"

#include <algorithm>
#include <future>
#include <vector>

#include "core/error.h"

namespace hamgan::eval {

metrics::PreparedBatches dataset_batches(std::shared_ptr<Dataset> data, std::vector<int64_t> indices,
                                         const metrics::FeatureNet& net, int64_t batch, int workers,
                                         std::shared_ptr<std::vector<int64_t>> labels,
                                         std::shared_ptr<int64_t> skipped) {
  if (batch < 1 || workers < 1) fail("dataset batches: batch and workers must be >= 1");
  const int64_t total = indices.empty() ? data->size() : static_cast<int64_t>(indices.size());
  for (const int64_t i : indices)
    if (i < 0 || i >= data->size()) fail("dataset batches: image ", i, " out of range [0, ", data->size(), ")");
  auto next = std::make_shared<int64_t>(0);
  auto index = std::make_shared<const std::vector<int64_t>>(std::move(indices));
  return [data, index, total, &net, batch, workers, next, labels, skipped]() -> torch::Tensor {
    while (*next < total) {
      const int64_t b = *next, e = std::min(total, b + batch);
      *next = e;
      const int64_t c = data->channels(), r = data->resolution();
      torch::Tensor px = torch::empty({e - b, c, r, r}, torch::kUInt8);
      std::vector<int32_t> y(static_cast<size_t>(e - b), 0);
      std::vector<char> ok(static_cast<size_t>(e - b), 0);
      std::vector<std::future<void>> jobs;
      const int64_t per = (e - b + workers - 1) / workers;
      for (int64_t s = b; s < e; s += per)
        jobs.push_back(std::async(std::launch::async, [&, s]() {
          for (int64_t i = s; i < std::min(e, s + per); ++i)  // get() reports a failure itself
            ok[static_cast<size_t>(i - b)] = data->get(index->empty() ? i : (*index)[static_cast<size_t>(i)],
                                                       px[i - b].data_ptr<uint8_t>(), y[static_cast<size_t>(i - b)]);
        }));
      for (auto& j : jobs) j.get();
      // An undecodable image is left out and counted, never a black image in a statistic.
      std::vector<int64_t> keep;
      for (int64_t i = 0; i < e - b; ++i)
        if (ok[static_cast<size_t>(i)]) {
          keep.push_back(i);
          if (labels) labels->push_back(y[static_cast<size_t>(i)]);
        }
      if (skipped) *skipped += (e - b) - static_cast<int64_t>(keep.size());
      if (keep.empty()) continue;
      if (static_cast<int64_t>(keep.size()) < e - b) px = px.index_select(0, torch::tensor(keep, torch::kLong));
      torch::InferenceMode guard;
      return net.prepare(px.to(torch::kFloat).div(255));
    }
    return {};
  };
}

}  // namespace hamgan::eval
