// Shared by the folded convolutions (conv_avgpool, upsample_conv): a 3x3 weight's taps
// combined into another kernel by a constant tap matrix, K = T W T^T per (out, in) pair.
#pragma once
#include <torch/torch.h>

#include <initializer_list>

namespace hamgan {

// Where the folded forms run (train.folded_convs). They equal the plain forms up to summation
// order. Process-wide, as autocast's state is.
enum class FoldPolicy {
  WherePays,  // auto: where measured faster (folded_conv_pays)
  Always,     // true: everywhere, GPUs and AMX CPUs included (to measure them there)
  Never,      // false: upsample + conv and conv + pool as written
};
void set_folded_convs(FoldPolicy policy);

// Whether a block folds its convolution for input x. Where the policy is WherePays: in fp32
// always; under bf16 (or fp16) on a CPU without AMX (measured on an AVX-512 BF16 AMD EPYC: D's
// fold 2.1-2.7x, G's 1.4-2x faster than the plain forms), but not where oneDNN runs the plain 3x3
// on AMX tiles (a Xeon step was 5% slower folded), nor on a GPU (not yet measured there: the
// folds remove the pool and upsample kernels and 2.25x / 2.25x of the MACs, but cuDNN's 3x3
// kernels are its fastest; Always measures it).
bool folded_conv_pays(const torch::Tensor& x);

// T W T^T for a [out, in, 3, 3] weight and the rows x 3 tap matrix `taps` (row-major); the
// result is [out, in, rows, rows], in the weight's precision (outside autocast), differentiable
// in W. `who` names the caller in the error for a weight of another shape.
torch::Tensor fold_3x3_taps(const torch::Tensor& w3, std::initializer_list<double> taps, const char* who);

}  // namespace hamgan
