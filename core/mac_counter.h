// Counts multiply-accumulates of the matrix products and convolutions that actually run
// on this thread while a MacCounter is alive (ATen RecordFunction observers, so any module
// is counted without cooperating). Counted: aten::mm, bmm, addmm, baddbmm, addbmm and
// convolution (shapes read at dispatch); a counted op nested in another is skipped, so a
// convolution lowered to mm is counted once. Not counted: elementwise ops, softmax,
// reductions, and matrix-vector products (mv, dot: only spectral norm's sigma uses them).
#pragma once
#include <ATen/record_function.h>

#include <cstdint>

namespace hamgan {

class MacCounter {
 public:
  MacCounter();
  ~MacCounter();
  MacCounter(const MacCounter&) = delete;
  MacCounter& operator=(const MacCounter&) = delete;

  int64_t macs() const;

 private:
  at::CallbackHandle handle_;
  int64_t start_;
};

}  // namespace hamgan
