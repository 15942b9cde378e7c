// One layer-form switch set, the others at auto, for a KernelScope (layers/kernel_choice.h).
#pragma once
#include "layers/kernel_choice.h"

namespace hamgan::test {

inline KernelChoice only_folded(FoldPolicy p) {
  KernelChoice k;
  k.folded_convs = p;
  return k;
}
inline KernelChoice only_cbn_relu(FusePolicy p) {
  KernelChoice k;
  k.fused_cbn_relu = p;
  return k;
}
inline KernelChoice only_bias(FusePolicy p) {
  KernelChoice k;
  k.bias_kernel = p;
  return k;
}
inline KernelChoice only_upsample_add(FusePolicy p) {
  KernelChoice k;
  k.upsample_add_kernel = p;
  return k;
}

}  // namespace hamgan::test
