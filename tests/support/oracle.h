// Loading what the Python oracles wrote (torch.save of a plain dict) and comparing.
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "core/state_dict.h"

namespace hamgan::test {

// $HAMGAN_ORACLE_DIR/<file>: the directory CTest gives this test's oracle script.
std::string oracle_path(const std::string& file);
// $HAMGAN_SOURCE_DIR/<rel>
std::string source_path(const std::string& rel);

// A dict of str -> tensor (other values skipped) from a torch.save'd plain dict.
TensorMap load_tensors(const std::string& path);
// Entries under "prefix." with the prefix removed.
TensorMap with_prefix(const TensorMap& all, const std::string& prefix);
const torch::Tensor& get(const TensorMap& m, const std::string& key);

// |a - e| <= atol + rtol * |e| elementwise, and equal shapes. Reports the worst element.
::testing::AssertionResult close(const torch::Tensor& actual, const torch::Tensor& expected,
                                 double rtol, double atol);

}  // namespace hamgan::test
