#include "core/mac_counter.h"

#include <cstring>
#include <memory>

#include "core/error.h"

namespace hamgan {

namespace {

thread_local int64_t t_macs = 0;
thread_local int t_depth = 0;  // counted ops currently running on this thread
thread_local int t_live = 0;   // MacCounters alive on this thread

struct Counted : at::ObserverContext {};

std::vector<int64_t> sizes_of(const c10::IValue& v) {
  return v.isTensor() ? v.toTensor().sizes().vec() : std::vector<int64_t>{};
}

// (n x k) @ (k x m), optionally batched: batch * n * k * m.
int64_t product_macs(const c10::IValue& a, const c10::IValue& b) {
  const auto sa = sizes_of(a), sb = sizes_of(b);
  if (sa.size() < 2 || sb.size() < 2) return 0;
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < sa.size(); ++i) batch *= sa[i];
  return batch * sa[sa.size() - 2] * sa.back() * sb.back();
}

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups): every output element of a forward conv (every input element of a transposed one)
// costs Cin/groups * prod(kernel) MACs against each of its channels.
int64_t conv_macs(c10::ArrayRef<const c10::IValue> in) {
  if (in.size() < 9 || !in[0].isTensor() || !in[1].isTensor()) return 0;
  const at::Tensor& x = in[0].toTensor();
  const at::Tensor& w = in[1].toTensor();
  const auto stride = in[3].toIntVector(), pad = in[4].toIntVector(), dil = in[5].toIntVector();
  const bool transposed = in[6].toBool();
  const int64_t spatial = x.dim() - 2;
  int64_t kernel = 1;
  for (int64_t i = 2; i < w.dim(); ++i) kernel *= w.size(i);
  if (transposed) return x.numel() * w.size(1) * kernel;  // weight: Cin x Cout/groups x k...
  int64_t out = x.size(0) * w.size(0);
  for (int64_t i = 0; i < spatial; ++i) {
    auto pick = [&](const std::vector<int64_t>& v) { return v.size() == 1 ? v[0] : v[i]; };
    const int64_t k = w.size(2 + i);
    out *= (x.size(2 + i) + 2 * pick(pad) - pick(dil) * (k - 1) - 1) / pick(stride) + 1;
  }
  return out * w.size(1) * kernel;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  const char* name = fn.name();
  int which = 0;
  if (!std::strcmp(name, "aten::mm") || !std::strcmp(name, "aten::bmm")) which = 1;
  else if (!std::strcmp(name, "aten::addmm") || !std::strcmp(name, "aten::baddbmm") ||
           !std::strcmp(name, "aten::addbmm")) which = 2;
  else if (!std::strcmp(name, "aten::convolution")) which = 3;
  if (!which) return nullptr;
  if (t_depth++ == 0) {
    const auto in = fn.inputs();
    if (which == 1 && in.size() >= 2) t_macs += product_macs(in[0], in[1]);
    if (which == 2 && in.size() >= 3) t_macs += product_macs(in[1], in[2]);
    if (which == 3) t_macs += conv_macs(in);
  }
  return std::make_unique<Counted>();
}

void on_end(const at::RecordFunction&, at::ObserverContext* ctx) {
  if (ctx) --t_depth;
}

}  // namespace

MacCounter::MacCounter() : start_(t_macs) {
  if (t_live) fail("MacCounter: only one may be alive per thread");
  ++t_live;
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(on_start, on_end).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
}

MacCounter::~MacCounter() {
  at::removeCallback(handle_);
  --t_live;
}

int64_t MacCounter::macs() const { return t_macs - start_; }

}  // namespace hamgan
