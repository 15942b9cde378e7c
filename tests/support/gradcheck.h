// Finite-difference gradient check in double precision, for any scalar function of a set
// of leaf tensors (inputs and module parameters alike): autograd's gradient of
// sum(f() * r), r fixed random, against central differences, element by element.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <vector>

namespace hamgan::test {

// Leaves must be double tensors with requires_grad; f must be deterministic (eval mode).
// The numeric gradient is Richardson's extrapolation of central differences at eps and
// eps / 2, (4 D(eps/2) - D(eps)) / 3, whose error is O(eps^4) plus round-off ~|noise of f| /
// eps. A plain central difference at one eps cannot serve every module: at 1e-6 the round-off
// of double matmuls (MKL, LibTorch 2.x) reached 2e-5 relative in an STT gradient, at 1e-5 the
// eps^2 term did the same in KAO's paper form.
::testing::AssertionResult gradcheck(const std::function<torch::Tensor()>& f,
                                     std::vector<torch::Tensor> leaves, double eps = 1e-5,
                                     double atol = 1e-7, double rtol = 1e-5,
                                     int64_t max_elements_per_leaf = 200);

}  // namespace hamgan::test
