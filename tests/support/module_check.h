// The oracle check every layer and context-module test runs: load the oracle's `init.*`
// state, train-mode forward + backward of sum(y * r), then eval forward, comparing the
// output, each floating input's gradient (`train.grad_<key>`), every parameter gradient
// (`train.grad.<name>`), the updated buffers (`after.<name>`) and `eval.y`.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "support/oracle.h"

namespace hamgan::test {

using ModuleForward = std::function<torch::Tensor(const std::vector<torch::Tensor>&)>;

// Parameter gradients of two instances of one module, matched by name: defined in both or
// neither, and close where defined (`actual`'s may have other strides, e.g. channels-last).
void expect_same_grads(torch::nn::Module& expected, torch::nn::Module& actual, double rtol,
                       double atol);

void expect_matches_oracle(torch::nn::Module& m, const std::string& file, const ModuleForward& fwd,
                           const std::vector<std::string>& input_keys, double rtol, double atol);

}  // namespace hamgan::test
