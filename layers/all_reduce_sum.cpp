#include "layers/all_reduce_sum.h"

#include <cstdint>

namespace hamgan {

namespace {

// The reducer travels through the autograd context as an integer: IValue has no raw pointers.
BatchReducer* reducer_of(torch::autograd::AutogradContext* ctx) {
  return reinterpret_cast<BatchReducer*>(
      static_cast<std::intptr_t>(ctx->saved_data["reducer"].toInt()));
}

struct AllReduceSum : torch::autograd::Function<AllReduceSum> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               BatchReducer* reducer) {
    ctx->saved_data["reducer"] = static_cast<int64_t>(reinterpret_cast<std::intptr_t>(reducer));
    torch::Tensor y = x.clone(at::MemoryFormat::Contiguous);
    reducer->all_reduce_sum(y);
    return y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    torch::Tensor g = grad[0].clone(at::MemoryFormat::Contiguous);
    reducer_of(ctx)->all_reduce_sum(g);
    return {g, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor all_reduce_sum(const torch::Tensor& x, BatchReducer& reducer) {
  return AllReduceSum::apply(x, &reducer);
}

}  // namespace hamgan
