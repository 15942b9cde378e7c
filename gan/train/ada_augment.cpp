#include "gan/train/ada_augment.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace hamgan {

namespace {
// The sym6 wavelet's decomposition low-pass filter (Daubechies' symlets, 12 taps), the paper's
// choice for the geometric resampling; normalised to sum 1 where it is used.
constexpr double kSym6[12] = {0.015404109327027373,  0.0034907120842174702, -0.11799011114819057,
                              -0.048311742585633,    0.4910559419267466,    0.787641141030194,
                              0.3379294217276218,    -0.07263752278646252,  -0.021060292512300564,
                              0.04472490177066578,   0.0017677118642428036, -0.007800708325034148};
constexpr int64_t kTaps = 12;
constexpr int64_t kPad = kTaps / 4;  // the margin the downsampling filter reads past the image, per side (2x)
constexpr double kPi = 3.14159265358979323846;

const auto kF64 = torch::TensorOptions().dtype(torch::kDouble);

// Batched 3x3 homogeneous matrices from [B] tensors.
torch::Tensor mat3(const std::vector<torch::Tensor>& e) { return torch::stack(e, 1).view({-1, 3, 3}); }
torch::Tensor translate2(const torch::Tensor& tx, const torch::Tensor& ty) {
  const torch::Tensor o = torch::ones_like(tx), z = torch::zeros_like(tx);
  return mat3({o, z, tx, z, o, ty, z, z, o});
}
torch::Tensor scale2(const torch::Tensor& sx, const torch::Tensor& sy) {
  const torch::Tensor o = torch::ones_like(sx), z = torch::zeros_like(sx);
  return mat3({sx, z, z, z, sy, z, z, z, o});
}
torch::Tensor rotate2(const torch::Tensor& t) {
  const torch::Tensor o = torch::ones_like(t), z = torch::zeros_like(t), c = t.cos(), s = t.sin();
  return mat3({c, -s, z, s, c, z, z, z, o});
}
torch::Tensor full(int64_t n, double v) { return torch::full({n}, v, kF64); }

// v where the gate u < q, else the transform's identity value.
torch::Tensor gated(const torch::Tensor& u, double q, const torch::Tensor& v, double identity) {
  const torch::Tensor on = u.dim() == v.dim() ? u < q : (u < q).unsqueeze(1);
  return torch::where(on, v, torch::full_like(v, identity));
}

// A depthwise 1-D filter `taps` along dimension `dim` (2: rows, 3: columns) of x [N, C, H, W],
// as cross-correlation, with `stride` along that dimension.
torch::Tensor filter_along(const torch::Tensor& x, const torch::Tensor& taps, int64_t dim, int64_t stride) {
  const int64_t c = x.size(1);
  const torch::Tensor w = taps.to(x.options()).view(dim == 3 ? std::vector<int64_t>{1, 1, 1, kTaps}
                                                             : std::vector<int64_t>{1, 1, kTaps, 1});
  const std::vector<int64_t> s = dim == 3 ? std::vector<int64_t>{1, stride} : std::vector<int64_t>{stride, 1};
  const std::vector<int64_t> no_padding{0, 0}, no_dilation{1, 1};
  return torch::conv2d(x, w.expand({c, 1, w.size(2), w.size(3)}).contiguous(), torch::Tensor(), s, no_padding,
                       no_dilation, c);
}

torch::Tensor lowpass() {
  const torch::Tensor f = torch::from_blob(const_cast<double*>(kSym6), {kTaps}, kF64).clone();
  return f / f.sum();
}

// 2x upsampling along `dim`: a zero after every sample, then the true convolution with 2 f
// (the filter's gain 2 keeps the mean), cut to 2L samples aligned with the input (6 taps before
// the first sample, 5 after).
torch::Tensor upsample_along(const torch::Tensor& x, int64_t dim) {
  const int64_t len = x.size(dim);
  torch::Tensor u = torch::stack({x, torch::zeros_like(x)}, dim + 1).flatten(dim, dim + 1);  // u[2j] = x[j]
  const int64_t before = (kTaps + 1) / 2, after = (kTaps - 2) / 2;
  u = torch::constant_pad_nd(u, dim == 3 ? std::vector<int64_t>{before, after} : std::vector<int64_t>{0, 0, before, after});
  const torch::Tensor y = filter_along(u, lowpass().flip(0) * 2, dim, 1);
  if (y.size(dim) != 2 * len) fail("ada: upsampling gave ", y.size(dim), " samples for ", len);
  return y;
}

// 2x downsampling along `dim`: the first and last sample dropped, cross-correlation with f,
// every second sample from the first.
torch::Tensor downsample_along(const torch::Tensor& x, int64_t dim) {
  return filter_along(x.narrow(dim, 1, x.size(dim) - 2), lowpass(), dim, 2);
}

// Bilinear sampling of x [N, C, Hu, Wu] at normalised positions (align_corners false: -1 and 1
// are the outer edges of the border pixels), zeros outside: grid_sample's arithmetic as gathers
// with constant weights, so that its gradient is differentiable again. `src` [N, Ho * Wo, 2]
// float64 on the CPU: (x, y) per output pixel.
torch::Tensor bilinear(const torch::Tensor& x, const torch::Tensor& src, int64_t ho, int64_t wo) {
  const int64_t n = x.size(0), c = x.size(1), hu = x.size(2), wu = x.size(3);
  const torch::Tensor px = ((src.select(2, 0) + 1) * wu - 1) / 2, py = ((src.select(2, 1) + 1) * hu - 1) / 2;
  const torch::Tensor x0 = px.floor(), y0 = py.floor(), fx = px - x0, fy = py - y0;
  const torch::Tensor flat = x.reshape({n, c, hu * wu});
  torch::Tensor out;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const torch::Tensor xi = x0 + dx, yi = y0 + dy;
      const torch::Tensor inside = (xi >= 0) & (xi < wu) & (yi >= 0) & (yi < hu);
      const torch::Tensor weight = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy) * inside.to(torch::kDouble);
      const torch::Tensor index = (yi.clamp(0, hu - 1) * wu + xi.clamp(0, wu - 1)).to(torch::kLong);
      const torch::Tensor v = flat.gather(2, index.to(x.device()).unsqueeze(1).expand({n, c, ho * wo})) *
                              weight.to(x.options()).unsqueeze(1);
      out = out.defined() ? out + v : v;
    }
  return out.view({n, c, ho, wo});
}

// The resampling of the images whose matrix is not the identity (Appendix B's steps: pad,
// upsample, transform, downsample), g [n, 3, 3] their inverse matrices.
torch::Tensor resample(torch::Tensor x, torch::Tensor g) {
  const int64_t n = x.size(0), h = x.size(2), w = x.size(3);
  const double cx = (w - 1) / 2.0, cy = (h - 1) / 2.0;
  // The margin: where the output's corners come from, plus the filters' reach, within the
  // one-reflection limit of the image's size.
  const torch::Tensor corners = torch::tensor({-cx, cx, cx, -cx, -cy, -cy, cy, cy, 1., 1., 1., 1.}, kF64).view({3, 4});
  const torch::Tensor cp = g.matmul(corners);  // [n, 3, 4]
  const torch::Tensor xs = cp.select(1, 0), ys = cp.select(1, 1);
  const double reach_x = 2 * kPad - cx, reach_y = 2 * kPad - cy;
  // host read: the matrices live on the host (no device wait); the padding is a shape.
  const auto margin = [](const torch::Tensor& v, double reach, int64_t size) {
    return static_cast<int64_t>(std::ceil(std::clamp(v.max().item<double>() + reach, 0.0, static_cast<double>(size - 1))));
  };
  const int64_t mx0 = margin(-xs, reach_x, w), my0 = margin(-ys, reach_y, h);
  const int64_t mx1 = margin(xs, reach_x, w), my1 = margin(ys, reach_y, h);
  x = torch::reflection_pad2d(x, {mx0, mx1, my0, my1});
  const auto one = [n](double v) { return full(n, v); };
  g = translate2(one((mx0 - mx1) / 2.0), one((my0 - my1) / 2.0)).bmm(g);
  x = upsample_along(upsample_along(x, 3), 2);
  g = scale2(one(2), one(2)).bmm(g).bmm(scale2(one(0.5), one(0.5)));
  g = translate2(one(-0.5), one(-0.5)).bmm(g).bmm(translate2(one(0.5), one(0.5)));
  const int64_t ho = 2 * (h + 2 * kPad), wo = 2 * (w + 2 * kPad), hu = x.size(2), wu = x.size(3);
  g = scale2(one(2.0 / wu), one(2.0 / hu)).bmm(g).bmm(scale2(one(wo / 2.0), one(ho / 2.0)));
  // Output pixel centres in normalised coordinates, mapped by g.
  const torch::Tensor gx = (torch::arange(wo, kF64) * 2 + 1) / wo - 1, gy = (torch::arange(ho, kF64) * 2 + 1) / ho - 1;
  const torch::Tensor pts = torch::stack({gx.view({1, wo}).expand({ho, wo}), gy.view({ho, 1}).expand({ho, wo}),
                                          torch::ones({ho, wo}, kF64)}, 2).view({ho * wo, 3});
  const torch::Tensor src = pts.matmul(g.narrow(1, 0, 2).transpose(1, 2));  // [n, Ho * Wo, 2]
  x = bilinear(x, src, ho, wo);
  return downsample_along(downsample_along(x, 3), 2);
}
}  // namespace

std::vector<std::pair<const char*, torch::Tensor AdaDraws::*>> ada_draw_fields() {
  using D = AdaDraws;
  return {{"xflip_u", &D::xflip_u},         {"xflip_i", &D::xflip_i},           {"rot90_u", &D::rot90_u},
          {"rot90_i", &D::rot90_i},         {"xint_u", &D::xint_u},             {"xint_t", &D::xint_t},
          {"scale_u", &D::scale_u},         {"scale_n", &D::scale_n},           {"rot_pre_u", &D::rot_pre_u},
          {"rot_pre_t", &D::rot_pre_t},     {"aniso_u", &D::aniso_u},           {"aniso_n", &D::aniso_n},
          {"rot_post_u", &D::rot_post_u},   {"rot_post_t", &D::rot_post_t},     {"xfrac_u", &D::xfrac_u},
          {"xfrac_n", &D::xfrac_n},         {"brightness_u", &D::brightness_u}, {"brightness_n", &D::brightness_n},
          {"contrast_u", &D::contrast_u},   {"contrast_n", &D::contrast_n},     {"lumaflip_u", &D::lumaflip_u},
          {"lumaflip_i", &D::lumaflip_i},   {"hue_u", &D::hue_u},               {"hue_t", &D::hue_t},
          {"saturation_u", &D::saturation_u}, {"saturation_n", &D::saturation_n}};
}

AdaDraws draw_ada(const AdaPolicy& policy, int64_t n, at::Generator& gen) {
  AdaDraws d;
  const auto u = [&] { return torch::rand({n}, gen, kF64); };
  const auto sym = [&] { return torch::rand({n}, gen, kF64) * 2 - 1; };
  const auto normal = [&](int64_t k) { return torch::randn(k == 1 ? std::vector<int64_t>{n} : std::vector<int64_t>{n, k}, gen, kF64); };
  const auto integer = [&](int64_t k) { return torch::randint(k, {n}, gen, kF64); };
  if (policy.blit) {
    d.xflip_u = u(), d.xflip_i = integer(2);
    d.rot90_u = u(), d.rot90_i = integer(4);
    d.xint_u = u(), d.xint_t = (torch::rand({n, 2}, gen, kF64) * 2 - 1) * 0.125;
  }
  if (policy.geom) {
    d.scale_u = u(), d.scale_n = normal(1);
    d.rot_pre_u = u(), d.rot_pre_t = sym();
    d.aniso_u = u(), d.aniso_n = normal(1);
    d.rot_post_u = u(), d.rot_post_t = sym();
    d.xfrac_u = u(), d.xfrac_n = normal(2);
  }
  if (policy.color) {
    d.brightness_u = u(), d.brightness_n = normal(1);
    d.contrast_u = u(), d.contrast_n = normal(1);
    d.lumaflip_u = u(), d.lumaflip_i = integer(2);
    d.hue_u = u(), d.hue_t = sym();
    d.saturation_u = u(), d.saturation_n = normal(1);
  }
  return d;
}

// Appendix B's order; each matrix maps output to input, so the transforms multiply on the right.
torch::Tensor ada_geometric_matrix(const AdaPolicy& policy, double p, const AdaDraws& d, int64_t h, int64_t w) {
  const torch::Tensor& any = policy.blit ? d.xflip_u : d.scale_u;
  const int64_t n = policy.blit || policy.geom ? any.size(0) : 0;
  torch::Tensor g = torch::eye(3, kF64).expand({n, 3, 3}).clone();
  if (policy.blit) {
    const torch::Tensor flip = gated(d.xflip_u, p, d.xflip_i, 0);
    g = g.bmm(scale2(1 / (1 - 2 * flip), full(n, 1)));
    g = g.bmm(rotate2(gated(d.rot90_u, p, d.rot90_i, 0) * (kPi / 2)));
    const torch::Tensor t = gated(d.xint_u, p, d.xint_t, 0);
    g = g.bmm(translate2(-(t.select(1, 0) * w).round(), -(t.select(1, 1) * h).round()));
  }
  if (policy.geom) {
    const double p_rot = 1 - std::sqrt(1 - p);  // P(rotation before or after) = p
    const torch::Tensor s = gated(d.scale_u, p, torch::exp2(d.scale_n * 0.2), 1);
    g = g.bmm(scale2(1 / s, 1 / s));
    g = g.bmm(rotate2(gated(d.rot_pre_u, p_rot, d.rot_pre_t * kPi, 0)));
    const torch::Tensor a = gated(d.aniso_u, p, torch::exp2(d.aniso_n * 0.2), 1);
    g = g.bmm(scale2(1 / a, a));
    g = g.bmm(rotate2(gated(d.rot_post_u, p_rot, d.rot_post_t * kPi, 0)));
    const torch::Tensor t = gated(d.xfrac_u, p, d.xfrac_n * 0.125, 0);
    g = g.bmm(translate2(-t.select(1, 0) * w, -t.select(1, 1) * h));
  }
  return g;
}

// Each colour matrix maps input to output, so the transforms multiply on the left.
torch::Tensor ada_color_matrix(const AdaPolicy& policy, double p, const AdaDraws& d, int64_t channels) {
  if (!policy.color) return torch::Tensor();
  const int64_t n = d.brightness_u.size(0);
  const torch::Tensor eye = torch::eye(4, kF64), v = torch::tensor({1., 1., 1., 0.}, kF64) / std::sqrt(3.0);
  const torch::Tensor vv = torch::outer(v, v);
  const auto per = [n](const torch::Tensor& s) { return s.view({n, 1, 1}); };
  torch::Tensor c = eye.expand({n, 4, 4}).clone();
  const torch::Tensor b = gated(d.brightness_u, p, d.brightness_n * 0.2, 0);
  torch::Tensor t = eye.expand({n, 4, 4}).clone();
  t.select(2, 3).narrow(1, 0, 3).copy_(b.view({n, 1}).expand({n, 3}));
  c = t.bmm(c);
  const torch::Tensor k = gated(d.contrast_u, p, torch::exp2(d.contrast_n * 0.5), 1);
  c = (torch::tensor({1., 1., 1., 0.}, kF64).diag() * per(k - 1) + eye).bmm(c);  // diag(k, k, k, 1)
  c = (eye - vv * per(gated(d.lumaflip_u, p, d.lumaflip_i, 0)) * 2).bmm(c);  // Householder reflection
  if (channels == 3) {
    // Rodrigues' rotation by theta about the unit axis v: cos I + sin [v]x + (1 - cos) v v^T.
    const torch::Tensor theta = gated(d.hue_u, p, d.hue_t * kPi, 0);
    const double e = 1 / std::sqrt(3.0);
    const torch::Tensor cross = torch::tensor({0., -e, e, 0., e, 0., -e, 0., -e, e, 0., 0., 0., 0., 0., 0.}, kF64).view({4, 4});
    const torch::Tensor cosine = per(theta.cos()), sine = per(theta.sin());
    torch::Tensor r = (eye - vv) * cosine + cross * sine + vv;
    r.select(1, 3).select(1, 3).fill_(1);  // row and column 3 are 0 elsewhere already (v's last entry is 0)
    c = r.bmm(c);
    const torch::Tensor s = gated(d.saturation_u, p, torch::exp2(d.saturation_n), 1);
    c = (vv + (eye - vv) * per(s)).bmm(c);
  }
  return c;
}

torch::Tensor ada_augment(const torch::Tensor& input, const AdaPolicy& policy, double p, const AdaDraws& d) {
  if (input.dim() != 4 || (input.size(1) != 1 && input.size(1) != 3))
    fail("ada: expected images N x 1 or 3 x H x W, got ", input.sizes());
  if (!(p >= 0 && p <= 1)) fail("ada: the probability p must be in [0, 1], got ", p);
  torch::Tensor x = input;
  const int64_t b = x.size(0), ch = x.size(1), h = x.size(2), w = x.size(3);
  if (policy.blit || policy.geom) {
    const torch::Tensor g = ada_geometric_matrix(policy, p, d, h, w);
    const torch::Tensor moved = (g != torch::eye(3, kF64)).flatten(1).any(1).nonzero().view({-1});
    if (moved.numel() > 0) {
      const torch::Tensor at = moved.to(x.device());
      x = x.index_copy(0, at, resample(x.index_select(0, at), g.index_select(0, moved)));
    }
  }
  if (policy.color) {
    const torch::Tensor c = ada_color_matrix(policy, p, d, ch).to(x.options());
    if (ch == 3) {
      x = torch::einsum("bij,bjhw->bihw", {c.narrow(1, 0, 3).narrow(2, 0, 3), x}) +
          c.narrow(1, 0, 3).select(2, 3).view({b, 3, 1, 1});
    } else {  // one channel: the RGB matrix's rows averaged, applied to gray = (g, g, g)
      const torch::Tensor a = c.narrow(1, 0, 3).mean(1);  // [B, 4]
      x = x * a.narrow(1, 0, 3).sum(1).view({b, 1, 1, 1}) + a.select(1, 3).view({b, 1, 1, 1});
    }
  }
  return x;
}

}  // namespace hamgan
