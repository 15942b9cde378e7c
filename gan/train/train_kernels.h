// A Trainer's choice of kernels and device arithmetic: the layers' forms (train.folded_convs,
// fused_cbn_relu, bias_kernel, upsample_add_kernel; layers/kernel_choice.h) and, on CUDA, TF32
// and cuDNN's algorithm timing (train.tf32, cudnn_benchmark). The Trainer puts them in force
// around every pass it runs and restores what was there after, so two Trainers of different
// configs in one process (a test's, a bench's) do not change each other's steps.
#pragma once
#include <torch/torch.h>

#include "gan/config/config.h"
#include "layers/kernel_choice.h"

namespace hamgan {

struct TrainKernels {
  KernelChoice layers;
  bool cuda = false;
  bool tf32 = false, cudnn_benchmark = false;  // on CUDA only
};

TrainKernels train_kernels(const TrainConfig& t, torch::Device device, bool amp);

// In force from construction to destruction: the layers' choice on this thread, the CUDA
// flags process-wide (ATen keeps them so).
class TrainKernelScope {
 public:
  explicit TrainKernelScope(const TrainKernels& k);
  ~TrainKernelScope();
  TrainKernelScope(const TrainKernelScope&) = delete;
  TrainKernelScope& operator=(const TrainKernelScope&) = delete;

 private:
  KernelScope layers_;
  bool cuda_, tf32_before_ = false, benchmark_before_ = false;
};

}  // namespace hamgan
