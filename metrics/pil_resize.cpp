#include "metrics/pil_resize.h"

#include <cmath>
#include <vector>

#include "core/error.h"

namespace hamgan::metrics {

namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // Pillow's fixed point for 8-bit images

// Keys' cubic convolution kernel with a = -0.5 (Pillow's BICUBIC), support 2.
double bicubic(double x) {
  constexpr double a = -0.5;
  x = std::abs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// The taps of one axis: output pixel o reads `count[o]` inputs from `first[o]` with fixed-point
// weights `k[o * ksize + j]` (Pillow's precompute_coeffs and normalize_coeffs_8bpc).
struct Taps {
  int64_t ksize = 0;
  std::vector<int64_t> first, count;
  std::vector<int32_t> k;
};

Taps taps(int64_t in_size, int64_t out_size) {
  const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  const double filterscale = std::max(scale, 1.0);
  const double support = 2.0 * filterscale;
  Taps t;
  t.ksize = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.first.resize(out_size), t.count.resize(out_size);
  t.k.assign(static_cast<size_t>(out_size * t.ksize), 0);
  std::vector<double> w(static_cast<size_t>(t.ksize));
  for (int64_t o = 0; o < out_size; ++o) {
    const double center = (static_cast<double>(o) + 0.5) * scale;
    // Pillow rounds the bounds by adding 0.5 and truncating toward zero.
    int64_t lo = static_cast<int64_t>(center - support + 0.5);
    if (lo < 0) lo = 0;
    int64_t hi = static_cast<int64_t>(center + support + 0.5);
    if (hi > in_size) hi = in_size;
    const int64_t n = hi - lo;
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += w[static_cast<size_t>(j)] = bicubic((static_cast<double>(j + lo) - center + 0.5) / filterscale);
    for (int64_t j = 0; j < n; ++j) {
      const double v = sum != 0.0 ? w[static_cast<size_t>(j)] / sum : w[static_cast<size_t>(j)];
      const double f = v * (1 << kPrecisionBits);
      t.k[static_cast<size_t>(o * t.ksize + j)] = static_cast<int32_t>(v < 0 ? -0.5 + f : 0.5 + f);
    }
    t.first[static_cast<size_t>(o)] = lo, t.count[static_cast<size_t>(o)] = n;
  }
  return t;
}

// Pillow's clip8: the accumulator (with its half added) shifted down, clamped to 0..255.
uint8_t clip8(int32_t v) {
  const int32_t s = v >> kPrecisionBits;
  return static_cast<uint8_t>(s < 0 ? 0 : s > 255 ? 255 : s);
}

// out[o] = clip8(sum_j in[(first + j) * stride] * k_j) along one axis of `n_lines` lines.
void pass(const uint8_t* in, uint8_t* out, const Taps& t, int64_t out_size, int64_t n_lines, int64_t in_line,
          int64_t in_step, int64_t out_line, int64_t out_step) {
  for (int64_t l = 0; l < n_lines; ++l)
    for (int64_t o = 0; o < out_size; ++o) {
      int32_t acc = 1 << (kPrecisionBits - 1);
      const int32_t* k = &t.k[static_cast<size_t>(o * t.ksize)];
      const uint8_t* src = in + l * in_line + t.first[static_cast<size_t>(o)] * in_step;
      for (int64_t j = 0; j < t.count[static_cast<size_t>(o)]; ++j) acc += static_cast<int32_t>(src[j * in_step]) * k[j];
      out[l * out_line + o * out_step] = clip8(acc);
    }
}

}  // namespace

torch::Tensor pil_bicubic_resize(const torch::Tensor& images, int64_t out_h, int64_t out_w) {
  if (images.dim() != 4 || images.scalar_type() != torch::kByte)
    fail("bicubic resize: images of shape ", images.sizes(), " and type ", images.scalar_type(),
         "; expected [B, C, H, W] uint8");
  if (out_h < 1 || out_w < 1) fail("bicubic resize: output size ", out_h, "x", out_w, "; expected at least 1x1");
  const torch::Tensor x = images.to(torch::kCPU).contiguous();
  const int64_t planes = x.size(0) * x.size(1), h = x.size(2), w = x.size(3);
  if (h == out_h && w == out_w) return x.clone();
  // Rows first (when the width changes), then columns, as Pillow's ImagingResampleInner.
  torch::Tensor mid = x;
  if (w != out_w) {
    mid = torch::empty({x.size(0), x.size(1), h, out_w}, x.options());
    const Taps t = taps(w, out_w);
    pass(x.data_ptr<uint8_t>(), mid.data_ptr<uint8_t>(), t, out_w, planes * h, w, 1, out_w, 1);
  }
  if (h == out_h) return mid;
  torch::Tensor out = torch::empty({x.size(0), x.size(1), out_h, out_w}, x.options());
  const Taps t = taps(h, out_h);
  for (int64_t p = 0; p < planes; ++p)
    pass(mid.data_ptr<uint8_t>() + p * h * out_w, out.data_ptr<uint8_t>() + p * out_h * out_w, t, out_h, out_w, 1,
         out_w, 1, out_w);
  return out;
}

}  // namespace hamgan::metrics
