#include "gan/models/memory_format.h"

namespace hamgan {

void to_channels_last(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  const auto relayout = [](torch::Tensor& t) {
    if (t.defined() && t.dim() == 4) t.set_data(t.contiguous(torch::MemoryFormat::ChannelsLast));
  };
  for (auto& p : m.parameters()) relayout(p);
  for (auto& b : m.buffers()) relayout(b);
}

}  // namespace hamgan
