// LibTorch's default random generators (the CPU one, and a GPU's) set aside for a scope and
// restored when it ends, also when it ends by an exception; inside, they run a stream of their
// own from `seed`. Work that is not training but draws where training draws (a score, the EMA
// generator's standing statistics: a Hamburger draws its random bases from the default
// generators) runs inside one, so it neither moves training's stream nor depends on when it runs.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <optional>

namespace hamgan {

class RngScope {
 public:
  RngScope(torch::Device device, uint64_t seed);
  ~RngScope();
  RngScope(const RngScope&) = delete;
  RngScope& operator=(const RngScope&) = delete;

 private:
  at::Generator cpu_;  // handles: they share the default generators' state
  std::optional<at::Generator> cuda_;
  torch::Tensor cpu_state_, cuda_state_;
};

}  // namespace hamgan
