#include "layers/cbn_relu.h"

#include <tuple>

#include "core/compat.h"
#include "core/error.h"
#include "layers/cuda_tensor.h"
#include "layers/sync_batch_norm.h"
#ifdef HAMGAN_CUDA_KERNELS
#include "layers/cbn_relu_cuda.h"
#endif

namespace hamgan {

namespace {


// Coefficients, statistics and sums: fp32 for fp32/bf16/fp16 activations, double for double.
torch::ScalarType acc_type(const torch::Tensor& x) {
  return x.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
}

// y = relu(x * scale + shift), scale and shift N x C in the accumulation type.
torch::Tensor apply_forward(const torch::Tensor& x, const torch::Tensor& scale, const torch::Tensor& shift) {
  if (kernels_run_on(x)) {
#ifdef HAMGAN_CUDA_KERNELS
    torch::Tensor y = torch::empty_like(x);
    launched(cuda::cbn_relu_forward(kernel_dtype(x, "cbn_relu"), x.data_ptr(), scale.contiguous().data_ptr(),
                                    shift.contiguous().data_ptr(), y.data_ptr(), kernel_shape(x), stream_of(x)),
             "cbn_relu", "forward");
    return y;
#endif
  }
  const auto n = x.size(0), c = x.size(1);
  return torch::relu(x.to(scale.scalar_type()) * scale.view({n, c, 1, 1}) + shift.view({n, c, 1, 1}))
      .to(x.scalar_type());
}

// s0 = sum_hw gm, s1 = sum_hw gm * x per (sample, channel), gm = g where y > 0.
std::tuple<torch::Tensor, torch::Tensor> reduce_backward(const torch::Tensor& g, const torch::Tensor& y,
                                                         const torch::Tensor& x, torch::ScalarType acc) {
  if (kernels_run_on(x)) {
#ifdef HAMGAN_CUDA_KERNELS
    const auto opts = x.options().dtype(acc).memory_format(torch::MemoryFormat::Contiguous);
    torch::Tensor s0 = torch::empty({x.size(0), x.size(1)}, opts), s1 = torch::empty_like(s0);
    launched(cuda::cbn_relu_reduce(kernel_dtype(x, "cbn_relu"), g.data_ptr(), y.data_ptr(), x.data_ptr(), s0.data_ptr(),
                                   s1.data_ptr(), kernel_shape(x), stream_of(x)),
             "cbn_relu", "reduce");
    return {s0, s1};
#endif
  }
  const torch::Tensor gm = g.to(acc) * (y > 0).to(acc);
  return {gm.sum({2, 3}), (gm * x.to(acc)).sum({2, 3})};
}

// dx = gm * k1[n, c] + x * k2[c] + k3[c].
torch::Tensor apply_backward(const torch::Tensor& g, const torch::Tensor& y, const torch::Tensor& x,
                             const torch::Tensor& k1, const torch::Tensor& k2, const torch::Tensor& k3) {
  if (kernels_run_on(x)) {
#ifdef HAMGAN_CUDA_KERNELS
    torch::Tensor dx = torch::empty_like(x);
    launched(cuda::cbn_relu_backward(kernel_dtype(x, "cbn_relu"), g.data_ptr(), y.data_ptr(), x.data_ptr(),
                                     k1.contiguous().data_ptr(), k2.contiguous().data_ptr(),
                                     k3.contiguous().data_ptr(), dx.data_ptr(), kernel_shape(x), stream_of(x)),
             "cbn_relu", "backward");
    return dx;
#endif
  }
  const auto n = x.size(0), c = x.size(1);
  const auto acc = k1.scalar_type();
  const torch::Tensor gm = g.to(acc) * (y > 0).to(acc);
  return (gm * k1.view({n, c, 1, 1}) + x.to(acc) * k2.view({1, c, 1, 1}) + k3.view({1, c, 1, 1}))
      .to(x.scalar_type());
}

// Inputs x, gain1 (N x C), bias (N x C), and the statistics mean, invstd (C) as constants:
// with batch statistics the backward adds their dependence on x itself.
struct CbnReluFunction : public torch::autograd::Function<CbnReluFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& gain1, const torch::Tensor& bias, const torch::Tensor& mean,
                               const torch::Tensor& invstd, bool batch_stats) {
    compat::NoAutocast no_autocast;
    const auto acc = acc_type(x);
    const auto c = x.size(1);
    const torch::Tensor g1 = gain1.to(acc), mu = mean.to(acc).view({1, c}), is = invstd.to(acc).view({1, c});
    const torch::Tensor scale = g1 * is;
    const torch::Tensor shift = bias.to(acc) - mu * scale;
    const torch::Tensor y = apply_forward(x, scale, shift);
    ctx->save_for_backward({x, y, g1, mu, is, scale});
    ctx->saved_data["batch_stats"] = batch_stats;
    ctx->saved_data["gain1_dtype"] = static_cast<int64_t>(gain1.scalar_type());
    ctx->saved_data["bias_dtype"] = static_cast<int64_t>(bias.scalar_type());
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    compat::NoAutocast no_autocast;
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &y = saved[1], &g1 = saved[2], &mu = saved[3], &is = saved[4],
                        &scale = saved[5];
    const torch::Tensor g = dense_like(grads[0].to(x.scalar_type()), x);
    const auto acc = g1.scalar_type();
    const auto [s0, s1] = reduce_backward(g, y, x, acc);
    // d/d bias = sum gm; d/d gain1 = sum gm * xhat = invstd (s1 - mean s0).
    const torch::Tensor dbias = s0;
    const torch::Tensor dgain1 = is * (s1 - mu * s0);
    torch::Tensor k2, k3;
    if (ctx->saved_data["batch_stats"].toBool()) {
      // BN's backward with dxhat = gm * gain1 (Ioffe & Szegedy 2015, Sec. 3):
      //   dx = invstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), means over N, H, W, where
      //   sum dxhat = sum_n gain1 s0 and sum dxhat xhat = sum_n gain1 dgain1.
      const double count = static_cast<double>(x.size(0) * x.size(2) * x.size(3));
      const torch::Tensor a = (g1 * s0).sum(0, true) / count, b = (g1 * dgain1).sum(0, true) / count;
      k2 = (-is * is * b).view({-1});
      k3 = (-is * a + is * is * b * mu).view({-1});
    } else {
      k2 = torch::zeros({x.size(1)}, g1.options());
      k3 = torch::zeros_like(k2);
    }
    const torch::Tensor dx = apply_backward(g, y, x, scale, k2, k3);
    const auto gain1_dtype = static_cast<torch::ScalarType>(ctx->saved_data["gain1_dtype"].toInt());
    const auto bias_dtype = static_cast<torch::ScalarType>(ctx->saved_data["bias_dtype"].toInt());
    return {dx, dgain1.to(gain1_dtype), dbias.to(bias_dtype), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace


bool fused_cbn_relu_pays(const torch::Tensor& x) { return fuse_pays(kernel_choice().fused_cbn_relu, x); }

torch::Tensor cbn_relu(torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x, const torch::Tensor& gain1,
                       const torch::Tensor& bias) {
  const auto& o = bn.options;
  if (x.dim() != 4 || x.size(1) != o.num_features())
    fail("cbn_relu: expected input N x ", o.num_features(), " x H x W, got ", x.sizes());
  const std::vector<int64_t> nc{x.size(0), x.size(1)};
  if (gain1.sizes() != c10::IntArrayRef(nc) || bias.sizes() != c10::IntArrayRef(nc))
    fail("cbn_relu: expected gain and bias of ", c10::IntArrayRef(nc), " (samples x channels), got ", gain1.sizes(), " and ",
         bias.sizes());
  const bool track = o.track_running_stats() && bn.running_mean.defined();
  const bool batch_stats = bn.is_training() || !track;
  const int64_t count = x.size(0) * x.size(2) * x.size(3);
  if (batch_stats && count < 2)  // as torch's batch norm: one value per channel has no variance
    fail("cbn_relu: expected more than 1 value per channel when training, got input ", x.sizes());
  const torch::Tensor xd = dense_like(x, x);
  const auto acc = acc_type(xd);
  torch::Tensor mean, invstd;
  {
    torch::NoGradGuard no_grad;
    compat::NoAutocast no_autocast;
    if (!batch_stats) {
      // copies: the backward keeps them while standing statistics may rewrite the buffers
      mean = bn.running_mean.to(acc, /*non_blocking=*/false, /*copy=*/true);
      invstd = torch::rsqrt(bn.running_var.to(acc) + o.eps());
    } else {
      torch::Tensor var;
      if (kernels_run_on(xd)) {  // Welford in fp32 accumulation, one read of x
        std::tie(mean, invstd) = at::batch_norm_stats(xd, o.eps());
        var = invstd.pow(-2) - o.eps();
      } else {  // two passes (mean, then centred squares), as torch's CPU batch norm
        std::tie(var, mean) = torch::var_mean(xd.to(acc), {0, 2, 3}, /*unbiased=*/false);
        invstd = torch::rsqrt(var + o.eps());
      }
      if (bn.is_training() && track)
        update_running_stats(bn, mean, var, torch::scalar_tensor(static_cast<double>(count), torch::kDouble));
    }
  }
  return CbnReluFunction::apply(xd, gain1, bias, mean, invstd, batch_stats);
}

}  // namespace hamgan
