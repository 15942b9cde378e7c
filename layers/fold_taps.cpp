#include "layers/fold_taps.h"

#include "core/compat.h"
#include "core/cpu_features.h"
#include "core/device.h"
#include "core/error.h"

namespace hamgan {

bool folded_conv_pays(const torch::Tensor& x) {
  const FoldPolicy p = kernel_choice().folded_convs;
  if (p != FoldPolicy::WherePays) return p == FoldPolicy::Always;
  if (!compat::conv_runs_reduced(x)) return true;
  return x.device().is_cuda() || !cpu_has_amx();
}

bool folded_shortcut_pays(const torch::Tensor& x) {
  const FoldPolicy p = kernel_choice().folded_convs;
  if (p != FoldPolicy::WherePays) return p == FoldPolicy::Always;
  return x.device().is_cuda();
}

torch::Tensor fold_3x3_taps(const torch::Tensor& w3, std::initializer_list<double> taps, const char* who) {
  if (w3.dim() != 4 || w3.size(2) != 3 || w3.size(3) != 3)
    fail(who, ": expected a [out, in, 3, 3] weight, got ", w3.sizes());
  compat::NoAutocast fp32;  // derive in the weight's precision; the convolution casts after
  const int64_t rows = static_cast<int64_t>(taps.size() / 3);
  // T W T^T is linear in W's 9 taps: vec(T W T^T) = (T kron T) vec(W) in row-major order, so all
  // out x in pairs fold in one [out * in, 9] x [9, rows^2] product. As out x in separate 3x3
  // products, cuBLAS ran them on 32x32 tiles at a fraction of a percent of its rate (on an H200,
  // 20 ms of a 158 ms ImageNet-128 step, forward and backward). The taps are 0, 1/2 and 1, so
  // T kron T is exact in any float type; it is made on the host and queued to the weight's device
  // (core/device.h: a blocking copy would wait for the device at every fold).
  const torch::Tensor t = torch::tensor(std::vector<double>(taps), torch::kDouble).view({rows, 3});
  const torch::Tensor tt = host_to_device(torch::kron(t, t).t().contiguous(), w3.options().requires_grad(false));
  return torch::mm(w3.reshape({-1, 9}), tt).view({w3.size(0), w3.size(1), rows, rows});
}

}  // namespace hamgan
