// Where a training step's time goes, by operator: LibTorch's (legacy) profiler around a block of
// code, then a table of the operators by self time (their time minus that of the operators they
// called), as torch.profiler's key_averages() prints it. For `hamgan bench train --profile`.
// Host time only: on CUDA it shows launch costs, not kernel times (use Nsight there).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hamgan {

struct OpTime {
  std::string name;
  int64_t calls = 0;
  double self_us = 0, total_us = 0;  // total counts a recursive call once per call
};

class OpProfile {
 public:
  OpProfile();   // starts recording this thread's operators (CPU timing only)
  ~OpProfile();  // stops if still recording
  OpProfile(const OpProfile&) = delete;
  OpProfile& operator=(const OpProfile&) = delete;
  // Stops and returns every operator seen, by self time, largest first.
  std::vector<OpTime> stop();

 private:
  bool on_ = false;
};

// The first `rows` operators and a total line, as percentages of `wall_us`.
void print_op_table(const std::vector<OpTime>& ops, double wall_us, size_t rows);

}  // namespace hamgan
