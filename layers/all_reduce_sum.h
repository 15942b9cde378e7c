// A differentiable sum over data-parallel ranks, for statistics that must cover the global
// batch (synchronised BN). layers/ does not know about process groups: the caller supplies
// a BatchReducer (gan/train/distributed.h implements it over c10d).
#pragma once
#include <torch/torch.h>

namespace hamgan {

class BatchReducer {
 public:
  virtual ~BatchReducer() = default;
  // Replaces `t` (dense, contiguous) by its elementwise sum over all ranks. Every rank must
  // call it the same number of times in the same order.
  virtual void all_reduce_sum(torch::Tensor& t) = 0;
};

// Ranks that each contribute only themselves: world size 1 (tests, and the identity).
class IdentityReducer : public BatchReducer {
 public:
  void all_reduce_sum(torch::Tensor&) override {}
};

// y = sum over ranks of x. Backward: dL/dx = sum over ranks of dL/dy, where L is the sum of
// every rank's loss; the gradients each rank then computes, averaged, are those of the
// global-batch loss (as torch.nn.SyncBatchNorm's all-reduce of grad statistics).
torch::Tensor all_reduce_sum(const torch::Tensor& x, BatchReducer& reducer);

}  // namespace hamgan
