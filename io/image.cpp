#include "io/image.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace hamgan {

namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;  // PIL's PRECISION_BITS for 8-bit images

struct Coeffs {
  int ksize = 0;
  std::vector<int> bounds;  // (xmin, count) per output pixel
  std::vector<int32_t> k;   // out x ksize fixed-point weights
};

// PIL's precompute_coeffs + normalize_coeffs_8bpc for the bilinear (triangle) filter.
Coeffs coeffs(int in_size, int out_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = 1.0 * filterscale;
  Coeffs c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.bounds.resize(2 * out_size);
  c.k.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> w(c.ksize);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      double t = std::abs((x + xmin - center + 0.5) * ss);
      w[x] = t < 1.0 ? 1.0 - t : 0.0;
      ww += w[x];
    }
    for (int x = 0; x < xmax; ++x) {
      const double v = ww != 0.0 ? w[x] / ww : w[x];
      c.k[static_cast<size_t>(xx) * c.ksize + x] = static_cast<int32_t>(
          v < 0 ? -0.5 + v * (1 << kPrecisionBits) : 0.5 + v * (1 << kPrecisionBits));
    }
    c.bounds[2 * xx] = xmin;
    c.bounds[2 * xx + 1] = xmax;
  }
  return c;
}

inline uint8_t clip8(int32_t v) {
  if (v >= (1 << kPrecisionBits << 8)) return 255;
  if (v <= 0) return 0;
  return static_cast<uint8_t>(v >> kPrecisionBits);
}

Image blank(int w, int h, int c) {
  Image im;
  im.width = w, im.height = h, im.channels = c;
  im.pixels.resize(static_cast<size_t>(w) * h * c);
  return im;
}

}  // namespace

Image resize_box(const Image& in, int x0, int y0, int cw, int ch, int ow, int oh) {
  if (cw <= 0 || ch <= 0 || x0 < 0 || y0 < 0 || x0 + cw > in.width || y0 + ch > in.height)
    fail("resize: box ", cw, "x", ch, "+", x0, "+", y0, " outside the ", in.width, "x",
         in.height, " image");
  const int C = in.channels;
  // Horizontal pass over the box rows: ch x ow.
  const Coeffs hx = coeffs(cw, ow);
  Image mid = blank(ow, ch, C);
  for (int y = 0; y < ch; ++y) {
    const uint8_t* row = in.pixels.data() + (static_cast<size_t>(y0 + y) * in.width + x0) * C;
    uint8_t* orow = mid.pixels.data() + static_cast<size_t>(y) * ow * C;
    for (int xx = 0; xx < ow; ++xx) {
      const int xmin = hx.bounds[2 * xx], n = hx.bounds[2 * xx + 1];
      const int32_t* k = hx.k.data() + static_cast<size_t>(xx) * hx.ksize;
      for (int c = 0; c < C; ++c) {
        int32_t ss = 1 << (kPrecisionBits - 1);
        for (int x = 0; x < n; ++x) ss += row[(xmin + x) * C + c] * k[x];
        orow[xx * C + c] = clip8(ss);
      }
    }
  }
  // Vertical pass: oh x ow.
  const Coeffs vy = coeffs(ch, oh);
  Image out = blank(ow, oh, C);
  const size_t stride = static_cast<size_t>(ow) * C;
  for (int yy = 0; yy < oh; ++yy) {
    const int ymin = vy.bounds[2 * yy], n = vy.bounds[2 * yy + 1];
    const int32_t* k = vy.k.data() + static_cast<size_t>(yy) * vy.ksize;
    uint8_t* orow = out.pixels.data() + yy * stride;
    for (size_t i = 0; i < stride; ++i) {
      int32_t ss = 1 << (kPrecisionBits - 1);
      for (int y = 0; y < n; ++y) ss += mid.pixels[(ymin + y) * stride + i] * k[y];
      orow[i] = clip8(ss);
    }
  }
  return out;
}

void to_chw(const Image& in, int channels, uint8_t* out) {
  const size_t plane = static_cast<size_t>(in.width) * in.height;
  const uint8_t* p = in.pixels.data();
  if (in.channels == channels) {
    for (size_t i = 0; i < plane; ++i)
      for (int c = 0; c < channels; ++c) out[c * plane + i] = p[i * channels + c];
  } else if (in.channels == 3 && channels == 1) {
    for (size_t i = 0; i < plane; ++i) {  // PIL's L24: ITU-R 601-2 luma in 16-bit fixed point
      const uint32_t v = p[3 * i] * 19595u + p[3 * i + 1] * 38470u + p[3 * i + 2] * 7471u + 0x8000u;
      out[i] = static_cast<uint8_t>(v >> 16);
    }
  } else if (in.channels == 1 && channels == 3) {
    for (int c = 0; c < 3; ++c) std::copy(p, p + plane, out + c * plane);
  } else {
    fail("image: cannot convert ", in.channels, " channels to ", channels,
         " (expected 1 or 3)");
  }
}

void fit_to(const Image& in, int resolution, int channels, uint8_t* out) {
  const int side = std::min(in.width, in.height);
  const int x0 = (in.width - side) / 2, y0 = (in.height - side) / 2;
  if (side == resolution && in.width == in.height) {
    to_chw(in, channels, out);
    return;
  }
  to_chw(resize_box(in, x0, y0, side, side, resolution, resolution), channels, out);
}

torch::Tensor to_tensor(const Image& in) {
  auto hwc = torch::from_blob(const_cast<uint8_t*>(in.pixels.data()), {in.height, in.width, in.channels}, torch::kUInt8);
  return hwc.permute({2, 0, 1}).to(torch::kFloat).div(255);
}

}  // namespace hamgan
