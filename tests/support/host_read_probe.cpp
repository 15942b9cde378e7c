#include "support/host_read_probe.h"

#include <ATen/record_function.h>

#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace hamgan::test {

namespace {

// item(), bool(t), is_nonzero and every scalar read; the ops whose output size depends on
// values (their CUDA kernels copy the count to the host); the linear-algebra error check.
constexpr const char* kHostReadOps[] = {
    "aten::_local_scalar_dense", "aten::nonzero", "aten::masked_select", "aten::_unique2",
    "aten::unique_consecutive", "aten::_linalg_check_errors", "aten::equal",
};

std::mutex mu;
std::map<std::string, int64_t> counts;
bool active = false;

std::unique_ptr<at::ObserverContext> on_op(const at::RecordFunction& fn) {
  const char* name = fn.name();
  for (const char* op : kHostReadOps)
    if (std::strcmp(name, op) == 0) {
      std::lock_guard<std::mutex> lock(mu);
      ++counts[op];
    }
  return nullptr;
}

}  // namespace

HostReadProbe::HostReadProbe() {
  std::lock_guard<std::mutex> lock(mu);
  if (active) throw std::logic_error("HostReadProbe: one probe at a time");
  active = true;
  counts.clear();
  handle_ = at::addGlobalCallback(at::RecordFunctionCallback(on_op).needsInputs(false));
}

HostReadProbe::~HostReadProbe() {
  at::removeCallback(handle_);
  std::lock_guard<std::mutex> lock(mu);
  active = false;
}

int64_t HostReadProbe::count() const {
  std::lock_guard<std::mutex> lock(mu);
  int64_t n = 0;
  for (const auto& kv : counts) n += kv.second;
  return n;
}

std::map<std::string, int64_t> HostReadProbe::by_op() const {
  std::lock_guard<std::mutex> lock(mu);
  return counts;
}

std::string HostReadProbe::summary() const {
  std::ostringstream s;
  for (const auto& kv : by_op()) s << (s.tellp() > 0 ? ", " : "") << kv.first << " x" << kv.second;
  return s.str().empty() ? "none" : s.str();
}

void HostReadProbe::reset() {
  std::lock_guard<std::mutex> lock(mu);
  counts.clear();
}

}  // namespace hamgan::test
