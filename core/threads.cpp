#include "core/threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

namespace hamgan {

void set_threads(int n) {
  at::set_num_threads(n < 1 ? 1 : n);
  // Looked up at run time: present with OpenBLAS (Debian's LibTorch), absent with MKL (the
  // pip wheels, whose MKL threads ATen already sets with at::set_num_threads).
  using SetThreads = void (*)(int);
  if (auto f = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(1);
}

}  // namespace hamgan
