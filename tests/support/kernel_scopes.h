// One layer-form switch set, the others at auto, for a KernelScope (layers/kernel_choice.h).
#pragma once
#include "layers/kernel_choice.h"

namespace hamgan::test {

template <typename Value>
KernelChoice only(Value KernelChoice::*field, Value value) {
  KernelChoice k;
  k.*field = value;
  return k;
}
inline KernelChoice only_folded(FoldPolicy p) { return only(&KernelChoice::folded_convs, p); }
inline KernelChoice only_cbn_relu(FusePolicy p) { return only(&KernelChoice::fused_cbn_relu, p); }
inline KernelChoice only_bias(FusePolicy p) { return only(&KernelChoice::bias_kernel, p); }
inline KernelChoice only_upsample_add(FusePolicy p) { return only(&KernelChoice::upsample_add_kernel, p); }

}  // namespace hamgan::test
