#include "gan/train/train_kernels.h"

#include "gan/train/amp.h"

namespace hamgan {

TrainKernels train_kernels(const TrainConfig& t, torch::Device device, bool amp) {
  TrainKernels k;
  k.layers = {t.folded_convs, t.upsample_conv, t.fused_cbn_relu, t.bias_kernel, t.upsample_add_kernel};
  k.cuda = device.is_cuda();
  k.tf32 = k.cuda && tf32_enabled(t.tf32, device, amp);
  // The step's shapes never change, so cuDNN's one-off timing of each convolution's algorithms
  // (torch.backends.cudnn.benchmark) pays from the second step on; its heuristic pick may not.
  k.cudnn_benchmark = k.cuda && t.cudnn_benchmark;
  return k;
}

TrainKernelScope::TrainKernelScope(const TrainKernels& k) : layers_(k.layers), cuda_(k.cuda) {
  if (!cuda_) return;
  auto& ctx = at::globalContext();
  tf32_before_ = ctx.allowTF32CuBLAS(), benchmark_before_ = ctx.benchmarkCuDNN();
  ctx.setAllowTF32CuBLAS(k.tf32);
  ctx.setBenchmarkCuDNN(k.cudnn_benchmark);
}

TrainKernelScope::~TrainKernelScope() {
  if (!cuda_) return;
  at::globalContext().setAllowTF32CuBLAS(tf32_before_);
  at::globalContext().setBenchmarkCuDNN(benchmark_before_);
}

}  // namespace hamgan
