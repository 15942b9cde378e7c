#include "layers/kernel_choice.h"

namespace hamgan {

namespace {
thread_local const KernelChoice* in_force = nullptr;
}  // namespace

const KernelChoice& kernel_choice() {
  static const KernelChoice defaults;
  return in_force ? *in_force : defaults;
}

KernelScope::KernelScope(const KernelChoice& choice) : choice_(choice), before_(in_force) { in_force = &choice_; }

KernelScope::~KernelScope() { in_force = before_; }

}  // namespace hamgan
