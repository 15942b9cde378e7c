// The host side of hamgan's CUDA kernels: a LibTorch tensor described to them (layers/cuda_types.h),
// and their launch errors raised as hamgan errors naming the operation.
#pragma once
#include <torch/torch.h>

#include "layers/cuda_types.h"

namespace hamgan {

// The kernels index dense N C H W or N H W C memory; anything else is made dense first.
bool channels_last(const torch::Tensor& x);
torch::Tensor dense_like(const torch::Tensor& t, const torch::Tensor& layout);

// Whether this build has hamgan's CUDA kernels (layers/*_cuda.cu: a CUDA LibTorch); without
// them, CUDA inputs take each operation's ATen form.
bool cuda_kernels_built();
// Whether hamgan's kernels run on x: a CUDA tensor, in a build that has them.
inline bool kernels_run_on(const torch::Tensor& x) { return x.is_cuda() && cuda_kernels_built(); }

// `op` names the operation in errors.
cuda::Dtype kernel_dtype(const torch::Tensor& x, const char* op);
cuda::ActShape kernel_shape(const torch::Tensor& x);  // x: N x C x H x W, dense (dense_like)
void* stream_of(const torch::Tensor& x);              // the current CUDA stream of x's device
void launched(const char* error, const char* op, const char* kernel);  // error: a launch's, or nullptr

}  // namespace hamgan
