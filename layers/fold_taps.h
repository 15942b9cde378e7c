// Shared by the folded convolutions (conv_avgpool, upsample_conv): a 3x3 weight's taps
// combined into another kernel by a constant tap matrix, K = T W T^T per (out, in) pair.
#pragma once
#include <torch/torch.h>

#include <initializer_list>

namespace hamgan {

// Whether a folded convolution (fewer MACs) is faster than the plain 3x3 one for input x: in fp32
// always; under bf16 (or fp16) on a CPU without AMX (measured on an AVX-512 BF16 AMD EPYC: D's
// fold 2.1-2.7x, G's 1.4-2x faster than the plain forms), but not where oneDNN runs the plain 3x3
// on AMX tiles (a Xeon step was 5% slower folded), nor on a GPU (not measured there).
// Never where set_folded_convs(false) (train.folded_convs).
bool folded_conv_pays(const torch::Tensor& x);

// Whether the folded forms may run at all (default true). They equal the plain forms up to
// summation order; false runs upsample + conv and conv + pool as written, to compare a run's
// numerics against them. Process-wide, as autocast's state is.
void set_folded_convs(bool allowed);

// T W T^T for a [out, in, 3, 3] weight and the rows x 3 tap matrix `taps` (row-major); the
// result is [out, in, rows, rows], in the weight's precision (outside autocast), differentiable
// in W. `who` names the caller in the error for a weight of another shape.
torch::Tensor fold_3x3_taps(const torch::Tensor& w3, std::initializer_list<double> taps, const char* who);

}  // namespace hamgan
