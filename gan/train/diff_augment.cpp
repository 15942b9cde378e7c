#include "gan/train/diff_augment.h"

namespace hamgan {

namespace {
int64_t shift_range(int64_t size) { return static_cast<int64_t>(size * 0.125 + 0.5); }  // the paper's 1/8
int64_t cutout_size(int64_t size) { return static_cast<int64_t>(size * 0.5 + 0.5); }    // the paper's 1/2

// [B] -> [B, 1, 1, 1] in x's dtype, for per-image scalars.
torch::Tensor per_image(const torch::Tensor& v, const torch::Tensor& x) {
  return v.to(x.scalar_type()).view({-1, 1, 1, 1});
}
}  // namespace

AugmentDraws draw_augment(const DiffAugPolicy& p, int64_t n, int64_t h, int64_t w, at::Generator& gen,
                          torch::Device device) {
  AugmentDraws d;
  const auto to = [&](const torch::Tensor& t) { return t.to(device, /*non_blocking=*/true); };
  if (p.color) {
    d.brightness = to(torch::rand({n}, gen));
    d.saturation = to(torch::rand({n}, gen));
    d.contrast = to(torch::rand({n}, gen));
  }
  if (p.translation) {
    const int64_t rx = shift_range(h), ry = shift_range(w);
    d.shift_x = to(torch::randint(-rx, rx + 1, {n}, gen, torch::kLong));
    d.shift_y = to(torch::randint(-ry, ry + 1, {n}, gen, torch::kLong));
  }
  if (p.cutout) {
    // Centres in [0, H] for an even square, [0, H) for an odd one (the reference's range).
    const int64_t sx = cutout_size(h), sy = cutout_size(w);
    d.cut_x = to(torch::randint(0, h + 1 - sx % 2, {n}, gen, torch::kLong));
    d.cut_y = to(torch::randint(0, w + 1 - sy % 2, {n}, gen, torch::kLong));
  }
  return d;
}

torch::Tensor diff_augment(const torch::Tensor& input, const DiffAugPolicy& p, const AugmentDraws& d) {
  torch::Tensor x = input;
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3);
  const auto opt = torch::TensorOptions(x.device()).dtype(torch::kLong);
  if (p.color) {
    x = x + (per_image(d.brightness, x) - 0.5);
    const torch::Tensor mc = x.mean(1, /*keepdim=*/true);
    x = (x - mc) * (per_image(d.saturation, x) * 2) + mc;
    const torch::Tensor m = x.mean({1, 2, 3}, /*keepdim=*/true);
    x = (x - m) * (per_image(d.contrast, x) + 0.5) + m;
  }
  if (p.translation) {
    // out[i, j] = x[i + tx, j + ty] inside the image, else 0: a gather from x padded by one zero
    // row/column on each side, source indices clamped onto that padding.
    const torch::Tensor rows = (torch::arange(h, opt).view({1, h}) + d.shift_x.view({b, 1}) + 1).clamp(0, h + 1);
    const torch::Tensor cols = (torch::arange(w, opt).view({1, w}) + d.shift_y.view({b, 1}) + 1).clamp(0, w + 1);
    const torch::Tensor pad = torch::constant_pad_nd(x, {1, 1, 1, 1});  // [B, C, H+2, W+2]
    const torch::Tensor batch = torch::arange(b, opt).view({b, 1, 1});
    // Advanced indexing on [B, H+2, W+2, C]: [B, H, W, C], back to NCHW (channels-last strides).
    x = pad.permute({0, 2, 3, 1}).index({batch, rows.view({b, h, 1}), cols.view({b, 1, w})}).permute({0, 3, 1, 2});
  }
  if (p.cutout) {
    const int64_t sx = cutout_size(h), sy = cutout_size(w);
    const torch::Tensor lo_x = (d.cut_x - sx / 2).view({b, 1, 1}), lo_y = (d.cut_y - sy / 2).view({b, 1, 1});
    const torch::Tensor i = torch::arange(h, opt).view({1, h, 1}), j = torch::arange(w, opt).view({1, 1, w});
    const torch::Tensor inside = (i >= lo_x) & (i < lo_x + sx) & (j >= lo_y) & (j < lo_y + sy);
    x = x * inside.logical_not().to(x.scalar_type()).unsqueeze(1);
  }
  return x;
}

namespace {
class DiffAugmentFeature : public StepFeature {
 public:
  DiffAugmentFeature(const DiffAugPolicy& p, torch::Device device) : policy_(p), device_(device) {}

  // One transform family for real and fake, fresh draws per image; in fp32 whatever autocast
  // gave (the colour transforms take means over the image).
  torch::Tensor augment(const torch::Tensor& x, at::Generator& rng) override {
    const AugmentDraws d = draw_augment(policy_, x.size(0), x.size(2), x.size(3), rng, device_);
    return diff_augment(x.to(torch::kFloat), policy_, d);
  }

 private:
  DiffAugPolicy policy_;
  torch::Device device_;
};
}  // namespace

std::unique_ptr<StepFeature> make_diff_augment_feature(const Config& cfg, torch::Device device) {
  return std::make_unique<DiffAugmentFeature>(cfg.train.diffaug, device);
}

}  // namespace hamgan
