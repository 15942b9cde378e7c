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
::testing::AssertionResult gradcheck(const std::function<torch::Tensor()>& f,
                                     std::vector<torch::Tensor> leaves, double eps = 1e-6,
                                     double atol = 1e-7, double rtol = 1e-5,
                                     int64_t max_elements_per_leaf = 200);

}  // namespace hamgan::test
