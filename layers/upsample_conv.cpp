#include "layers/upsample_conv.h"

#include "core/compat.h"
#include "core/error.h"
#include "layers/channel_bias.h"
#include "layers/cuda_tensor.h"
#include "layers/fold_taps.h"
#ifdef HAMGAN_CUDA_KERNELS
#include "layers/upsample_add_cuda.h"
#endif

namespace hamgan {

torch::Tensor upsample_folded_kernels(const torch::Tensor& w3) {
  // Rows 2a, 2a+1 of the taps: the 3x3 taps that fall on input rows i-1+a and i+a for phase a.
  const torch::Tensor k = fold_3x3_taps(w3, {1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0},
                                        "upsample_folded_kernels");  // [out, in, 4 (2a+r), 4 (2b+s)]
  const int64_t out = w3.size(0), in = w3.size(1);
  return k.reshape({out, in, 2, 2, 2, 2}).permute({2, 4, 0, 1, 3, 5}).reshape({4 * out, in, 2, 2});
}

torch::Tensor upsample_transposed_kernel(const torch::Tensor& w3) {
  return fold_3x3_taps(w3, {0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0}, "upsample_transposed_kernel")
      .transpose(0, 1);
}

namespace {

// The phases' interleave: phase (a, b)'s output (i, j), held by the convolution at channel
// block 2a + b, position (i + a, j + b), goes to output pixel (2i + a, 2j + b). One strided
// view of the convolution's output [N, out, H, 2 (a), W, 2 (b)] (any layout: its strides are
// read off), copied once. A custom backward writes the gradient through the same view: ATen's
// generic as_strided backward (index_add_ over an arange) cost more than the copies here. The
// view reaches every position of the convolution's output but one row and one column per phase
// (row H for a = 0, row 0 for a = 1; column W for b = 0, column 0 for b = 1), so only those are
// zeroed: a zero fill of the whole tensor would be a third of the backward's memory traffic.
std::pair<std::vector<int64_t>, std::vector<int64_t>> phase_view(const torch::Tensor& all, int64_t out) {
  const auto s = all.strides();
  const int64_t n = all.size(0), h = all.size(2) - 1, w = all.size(3) - 1;
  return {{n, out, h, 2, w, 2}, {s[0], s[1], s[2], s[2] + 2 * out * s[1], s[3], s[3] + out * s[1]}};
}

class Interleave : public torch::autograd::Function<Interleave> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& all,
                               int64_t out, bool channels_last) {
    ctx->saved_data["out"] = out;
    ctx->saved_data["shape"] = all.sizes().vec();
    ctx->saved_data["cl"] = channels_last;
    const auto [size, stride] = phase_view(all, out);
    const torch::Tensor y6 = all.as_strided(size, stride, all.storage_offset());
    const int64_t n = size[0], h = size[2], w = size[4];
    if (channels_last)
      return y6.permute({0, 2, 3, 4, 5, 1}).contiguous().view({n, 2 * h, 2 * w, out}).permute({0, 3, 1, 2});
    return y6.contiguous().view({n, out, 2 * h, 2 * w});
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const int64_t out = ctx->saved_data["out"].toInt();
    const auto shape = ctx->saved_data["shape"].toIntVector();
    const torch::Tensor g = grads[0];
    torch::Tensor all = torch::empty(shape, g.options().memory_format(
        ctx->saved_data["cl"].toBool() ? torch::MemoryFormat::ChannelsLast : torch::MemoryFormat::Contiguous));
    const auto [size, stride] = phase_view(all, out);
    // [N, 2 (a), 2 (b), out, H + 1, W + 1]: splitting the channels is a view in either layout.
    const torch::Tensor phases = all.view({size[0], 2, 2, out, size[2] + 1, size[4] + 1});
    phases.select(1, 0).select(3, size[2]).zero_();
    phases.select(1, 1).select(3, 0).zero_();
    phases.select(2, 0).select(4, size[4]).zero_();
    phases.select(2, 1).select(4, 0).zero_();
    // Splitting 2H into (H, 2) and 2W into (W, 2) is a view for any strides.
    all.as_strided(size, stride, all.storage_offset()).copy_(g.view({size[0], out, size[2], 2, size[4], 2}));
    return {all, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor upsample2_conv3x3(const torch::Tensor& x, const torch::Tensor& w3, const torch::Tensor& bias) {
  if (kernel_choice().upsample_conv == UpsampleConvForm::Transposed) {
    const std::vector<int64_t> stride{2, 2}, padding{1, 1}, no_output_padding{0, 0}, no_dilation{1, 1};
    torch::Tensor y = torch::conv_transpose2d(x, upsample_transposed_kernel(w3), bias, stride, padding,
                                              no_output_padding, /*groups=*/1, no_dilation);
    const bool cl = x.is_contiguous(torch::MemoryFormat::ChannelsLast) && !x.is_contiguous();
    return cl ? y.contiguous(torch::MemoryFormat::ChannelsLast) : y;
  }
  // All four phases in one convolution with padding 1: its position (i + a, j + b), channel
  // block 2a + b, reads input rows i-1+a, i+a and columns j-1+b, j+b, i.e. holds phase (a, b)'s
  // output (i, j).
  const torch::Tensor all = conv2d_bias(x, upsample_folded_kernels(w3),
                                        bias.defined() ? bias.repeat({4}) : bias, /*stride=*/1, /*padding=*/1);
  const bool cl = x.is_contiguous(torch::MemoryFormat::ChannelsLast) && !x.is_contiguous();
  return Interleave::apply(all, w3.size(0), cl);
}

namespace {


// h + up2(s) by the kernels: h, s of one dtype, dense in h's memory format.
class UpsampleAdd : public torch::autograd::Function<UpsampleAdd> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& h, const torch::Tensor& s) {
    compat::NoAutocast no_autocast;
    const torch::Tensor hd = dense_like(h, h), sd = dense_like(s, h);
    torch::Tensor y = torch::empty_like(hd);
    ctx->saved_data["s_shape"] = s.sizes().vec();
#ifdef HAMGAN_CUDA_KERNELS
    launched(cuda::upsample_add_forward(kernel_dtype(hd, "add_upsampled2"), hd.data_ptr(), sd.data_ptr(), y.data_ptr(),
                                        kernel_shape(hd), hd.size(2), hd.size(3), stream_of(hd)),
             "add_upsampled2", "forward");
#endif
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const torch::Tensor g = dense_like(grads[0], grads[0]);
    torch::Tensor ds = torch::empty(ctx->saved_data["s_shape"].toIntVector(),
                                    g.options().memory_format(channels_last(g) ? torch::MemoryFormat::ChannelsLast
                                                                               : torch::MemoryFormat::Contiguous));
#ifdef HAMGAN_CUDA_KERNELS
    launched(cuda::upsample_add_backward(kernel_dtype(g, "add_upsampled2"), g.data_ptr(), ds.data_ptr(), kernel_shape(g),
                                         g.size(2), g.size(3), stream_of(g)),
             "add_upsampled2", "backward");
#endif
    return {grads[0], ds};
  }
};

}  // namespace


bool upsample_add_kernel_pays(const torch::Tensor& h) { return fuse_pays(kernel_choice().upsample_add_kernel, h); }

torch::Tensor add_upsampled2(const torch::Tensor& h, const torch::Tensor& s) {
  const auto n = h.size(0), c = h.size(1), hh = h.size(2), w = h.size(3);
  if (s.dim() != 4 || s.size(0) != n || s.size(1) != c || 2 * s.size(2) != hh || 2 * s.size(3) != w)
    fail("add_upsampled2: expected a shortcut of [", n, ", ", c, ", ", hh / 2, ", ", w / 2, "] for ", h.sizes(),
         ", got ", s.sizes());
  if (upsample_add_kernel_pays(h) && kernels_run_on(h) && h.scalar_type() == s.scalar_type() &&
      h.is_floating_point())
    return UpsampleAdd::apply(h, s);
  // Splitting H and W into (half, 2) is a view in either memory format; so is the sum's merge
  // back, whose layout follows h's.
  const torch::Tensor sum = h.view({n, c, hh / 2, 2, w / 2, 2}) + s.view({n, c, hh / 2, 1, w / 2, 1});
  return sum.view({n, c, hh, w});
}

}  // namespace hamgan
