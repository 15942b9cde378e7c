#include "metrics/image_dir.h"

#include <algorithm>
#include <future>
#include <memory>

#include "core/error.h"
#include "io/decode.h"

namespace hamgan::metrics {

PreparedBatches image_batches(const std::vector<std::string>& files, const FeatureNet& net, int64_t batch,
                          int workers) {
  if (batch < 1 || workers < 1) fail("image batches: batch and workers must be >= 1");
  struct State {
    size_t next = 0;
    std::future<torch::Tensor> pending;
  };
  auto st = std::make_shared<State>();
  auto launch = [st, &files, &net, batch, workers]() {
    const size_t begin = st->next, end = std::min(files.size(), begin + static_cast<size_t>(batch));
    st->next = end;
    if (begin == end) return std::future<torch::Tensor>();
    return std::async(std::launch::async, [&files, &net, begin, end, workers]() {
      std::vector<torch::Tensor> imgs(end - begin);
      std::vector<std::future<void>> jobs;
      const size_t per = (end - begin + workers - 1) / workers;
      for (size_t s = begin; s < end; s += per)
        jobs.push_back(std::async(std::launch::async, [&, s]() {
          torch::InferenceMode guard;
          for (size_t k = s; k < std::min(end, s + per); ++k)
            imgs[k - begin] = net.prepare(to_tensor(decode_image(files[k])).unsqueeze(0)).squeeze(0);
        }));
      for (auto& j : jobs) j.get();
      for (size_t k = 1; k < imgs.size(); ++k)
        if (imgs[k].sizes() != imgs[0].sizes())
          fail(files[begin + k], ": size ", imgs[k].sizes(), " differs from ", files[begin], " (", imgs[0].sizes(),
               "); TorchScript weights need equal image sizes");
      return torch::stack(imgs);
    });
  };
  st->pending = launch();
  return [st, launch]() -> torch::Tensor {
    if (!st->pending.valid()) return {};
    torch::Tensor b = st->pending.get();
    st->pending = launch();  // decode the next batch while this one runs
    return b;
  };
}

}  // namespace hamgan::metrics
