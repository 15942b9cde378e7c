#include "layers/channel_bias.h"

#include "core/compat.h"
#include "core/error.h"
#include "layers/cuda_tensor.h"
#ifdef HAMGAN_CUDA_KERNELS
#include "layers/channel_bias_cuda.h"
#endif

namespace hamgan {

namespace {


// y + b (then the ReLU) in the accumulation type (fp32, or double for double), rounded once to
// y's dtype. Rounding is monotone and keeps 0, so the ReLU before or after it is the same.
torch::Tensor add_bias(const torch::Tensor& y, const torch::Tensor& b, bool relu) {
  const auto acc = y.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  const torch::Tensor bias = b.to(acc).contiguous();
  const torch::Tensor yd = dense_like(y, y);
  if (kernels_run_on(yd)) {
#ifdef HAMGAN_CUDA_KERNELS
    torch::Tensor out = torch::empty_like(yd);
    launched(cuda::channel_bias_forward(kernel_dtype(yd, "add_channel_bias"), yd.data_ptr(), bias.data_ptr(),
                                        out.data_ptr(), kernel_shape(yd), relu, stream_of(yd)),
             "add_channel_bias", "forward");
    return out;
#endif
  }
  torch::Tensor sum = yd.to(acc) + bias.view({1, -1, 1, 1});
  if (relu) sum = torch::relu(sum);
  return sum.to(y.scalar_type()).contiguous(
      channels_last(yd) ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous);
}

struct ChannelBias : torch::autograd::Function<ChannelBias> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& y, const torch::Tensor& b,
                               bool relu) {
    ctx->saved_data["b_dtype"] = static_cast<int64_t>(b.scalar_type());
    compat::NoAutocast no_autocast;
    torch::Tensor out = add_bias(y, b, relu);
    if (relu) ctx->save_for_backward({out});  // y > 0 where out > 0: ReLU's own backward reads its output
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    torch::Tensor g = grads[0];
    const auto saved = ctx->get_saved_variables();
    if (!saved.empty()) g = torch::threshold_backward(g, saved[0], 0);
    const auto b_dtype = static_cast<torch::ScalarType>(ctx->saved_data["b_dtype"].toInt());
    const auto acc = g.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
    return {g, g.sum({0, 2, 3}, /*keepdim=*/false, acc).to(b_dtype), torch::Tensor()};
  }
};

void check_bias_args(const char* op, const torch::Tensor& y, const torch::Tensor& b) {
  if (y.dim() != 4 || b.dim() != 1 || b.size(0) != y.size(1))
    fail(op, ": expected N x C x H x W and a bias of C, got ", y.sizes(), " and ", b.sizes());
  if (!y.is_floating_point() || !b.is_floating_point())
    fail(op, ": expected floating-point tensors, got ", y.scalar_type(), " and ", b.scalar_type());
}

}  // namespace


bool bias_kernel_pays(const torch::Tensor& x) { return fuse_pays(kernel_choice().bias_kernel, x); }

torch::Tensor add_channel_bias(const torch::Tensor& y, const torch::Tensor& b) {
  check_bias_args("add_channel_bias", y, b);
  return ChannelBias::apply(y, b, false);
}

torch::Tensor add_channel_bias_relu(const torch::Tensor& y, const torch::Tensor& b) {
  check_bias_args("add_channel_bias_relu", y, b);
  return ChannelBias::apply(y, b, true);
}

torch::Tensor conv2d_bias(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b, int64_t stride,
                          int64_t padding) {
  if (!b.defined() || !bias_kernel_pays(x)) return torch::conv2d(x, w, b, stride, padding);
  return add_channel_bias(torch::conv2d(x, w, {}, stride, padding), b);
}

torch::Tensor conv2d_bias_relu(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                               int64_t stride, int64_t padding) {
  if (!b.defined() || !bias_kernel_pays(x)) return torch::relu(torch::conv2d(x, w, b, stride, padding));
  return add_channel_bias_relu(torch::conv2d(x, w, {}, stride, padding), b);
}

}  // namespace hamgan
