// Per-layer records for `hamgan info`: G and D push one after each stage when asked.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

namespace hamgan {

struct LayerRecord {
  std::string name;
  std::vector<int64_t> shape;
  int64_t params = 0;
};
using Trace = std::vector<LayerRecord>;

inline int64_t count_params(const torch::nn::Module& m) {
  int64_t n = 0;
  for (const auto& p : m.parameters()) n += p.numel();
  return n;
}

inline void record(Trace* trace, const std::string& name, const torch::Tensor& out,
                   const torch::nn::Module* m) {
  if (trace) trace->push_back({name, out.sizes().vec(), m ? count_params(*m) : 0});
}

}  // namespace hamgan
