#include "gan/eval/dataset_batches.h"

#include <algorithm>
#include <future>
#include <vector>

#include "core/error.h"

namespace hamgan::eval {

metrics::PreparedBatches dataset_batches(std::shared_ptr<Dataset> data, int64_t n, const metrics::FeatureNet& net,
                                     int64_t batch, int workers, std::shared_ptr<std::vector<int64_t>> labels) {
  if (batch < 1 || workers < 1) fail("dataset batches: batch and workers must be >= 1");
  const int64_t total = n > 0 ? n : data->size();
  if (total > data->size()) fail("-n ", n, ": the data source has only ", data->size(), " images");
  auto next = std::make_shared<int64_t>(0);
  return [data, total, &net, batch, workers, next, labels]() -> torch::Tensor {
    const int64_t b = *next, e = std::min(total, b + batch);
    if (b >= e) return {};
    *next = e;
    const int64_t c = data->channels(), r = data->resolution();
    torch::Tensor px = torch::empty({e - b, c, r, r}, torch::kUInt8);
    std::vector<int32_t> y(static_cast<size_t>(e - b), 0);
    std::vector<std::future<void>> jobs;
    const int64_t per = (e - b + workers - 1) / workers;
    for (int64_t s = b; s < e; s += per)
      jobs.push_back(std::async(std::launch::async, [&, s]() {
        for (int64_t i = s; i < std::min(e, s + per); ++i) {
          if (!data->get(i, px[i - b].data_ptr<uint8_t>(), y[static_cast<size_t>(i - b)]))
            px[i - b].zero_();  // reported by get()
        }
      }));
    for (auto& j : jobs) j.get();
    if (labels) labels->insert(labels->end(), y.begin(), y.end());
    torch::InferenceMode guard;
    return net.prepare(px.to(torch::kFloat).div(255));
  };
}

}  // namespace hamgan::eval
