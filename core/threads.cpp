#include "core/threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

namespace hamgan {

namespace {
// Looked up at run time: present with OpenBLAS (Debian's LibTorch), absent with MKL (the pip
// wheels, whose MKL threads ATen already sets with at::set_num_threads).
using SetThreads = void (*)(int);
using GetThreads = int (*)();
SetThreads openblas_set() { return reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")); }
GetThreads openblas_get() { return reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads")); }
}  // namespace

void set_threads(int n) {
  at::set_num_threads(n < 1 ? 1 : n);
  if (const SetThreads f = openblas_set()) f(1);
}

BlasThreadsScope::BlasThreadsScope(int n) {
  const SetThreads set = openblas_set();
  const GetThreads get = openblas_get();
  if (!set || !get) return;
  previous_ = get();
  set(n < 1 ? 1 : n);
}

BlasThreadsScope::~BlasThreadsScope() {
  if (previous_ > 0) openblas_set()(previous_);
}

}  // namespace hamgan
