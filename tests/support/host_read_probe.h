// Counts the operators through which LibTorch reads a tensor's value on the host: on a GPU
// each one waits for the device to finish everything queued before it (the step must
// never wait for the device). Every such read ends in one of these operators, ours and
// LibTorch's own (BatchNorm's num_batches_tracked, linalg_solve's error check), so a CPU
// run of the same code shows them. Copies to the host are no-ops on the CPU and are found
// by scripts/check_host_reads.py instead.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace hamgan::test {

class HostReadProbe {
 public:
  HostReadProbe();  // counts from now until destroyed (one probe at a time)
  ~HostReadProbe();
  HostReadProbe(const HostReadProbe&) = delete;
  HostReadProbe& operator=(const HostReadProbe&) = delete;

  int64_t count() const;                     // reads since construction or reset()
  std::map<std::string, int64_t> by_op() const;  // the same, per operator name
  std::string summary() const;               // "aten::_local_scalar_dense x2, ..." for messages
  void reset();

 private:
  uint64_t handle_;
};

}  // namespace hamgan::test
