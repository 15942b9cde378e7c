#include "metrics/dinov2.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstring>
#include <iostream>

#include "core/error.h"
#include "core/threads.h"
#include "core/word_list.h"
#include "io/torch_file.h"
#include "metrics/pil_resize.h"

namespace hamgan::metrics {

namespace F = torch::nn::functional;

namespace {

constexpr int64_t kPatch = 14;
constexpr int64_t kGrid = 37;         // the released pos_embed: 518 px / 14
constexpr double kLayerNormEps = 1e-6;
constexpr double kInterpolateOffset = 0.1;  // the official interpolate_pos_encoding's offset

// Hidden width of ViT-g/14's SwiGLU: 2/3 of 4 dim, rounded up to a multiple of 8 (SwiGLUFFNFused).
int64_t swiglu_hidden(int64_t dim) { return (4 * dim * 2 / 3 + 7) / 8 * 8; }

// A named container, so that parameter names follow the released keys (patch_embed.proj, blocks.0.attn.qkv, ...).
std::shared_ptr<torch::nn::Module> holder(torch::nn::Module& parent, const std::string& name) {
  return parent.register_module(name, std::make_shared<torch::nn::Module>());
}

torch::nn::LayerNorm layer_norm(int64_t dim) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim}).eps(kLayerNormEps));
}

// FNV-1a over the keys and, eight bytes at a time, the tensors' bytes.
std::string weights_hash(const TensorMap& sd) {
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const auto& [k, t] : sd) {
    for (char c : k) mix(static_cast<unsigned char>(c));
    const torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    const auto* b = static_cast<const uint8_t*>(c.data_ptr());
    const size_t n = static_cast<size_t>(c.numel()) * c.element_size();
    size_t i = 0;
    for (uint64_t w; i + 8 <= n; i += 8) std::memcpy(&w, b + i, 8), mix(w);
    for (; i < n; ++i) mix(b[i]);
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

const std::vector<DinoV2Arch>& dinov2_archs() {
  static const std::vector<DinoV2Arch> all = {
      {"vits14", "ViT-S/14", 384, 12, 6, false},
      {"vitb14", "ViT-B/14", 768, 12, 12, false},
      {"vitl14", "ViT-L/14", 1024, 24, 16, false},
      {"vitg14", "ViT-g/14", 1536, 40, 24, true},
  };
  return all;
}

std::vector<std::pair<std::string, std::vector<int64_t>>> dinov2_layout(const DinoV2Arch& a) {
  const int64_t d = a.dim;
  std::vector<std::pair<std::string, std::vector<int64_t>>> l = {
      {"cls_token", {1, 1, d}},          {"pos_embed", {1, kGrid * kGrid + 1, d}}, {"mask_token", {1, d}},
      {"patch_embed.proj.weight", {d, 3, kPatch, kPatch}}, {"patch_embed.proj.bias", {d}}};
  const int64_t hidden = a.swiglu ? swiglu_hidden(d) : 4 * d;
  for (int64_t i = 0; i < a.depth; ++i) {
    const std::string b = "blocks." + std::to_string(i) + ".";
    l.push_back({b + "norm1.weight", {d}});
    l.push_back({b + "norm1.bias", {d}});
    l.push_back({b + "attn.qkv.weight", {3 * d, d}});
    l.push_back({b + "attn.qkv.bias", {3 * d}});
    l.push_back({b + "attn.proj.weight", {d, d}});
    l.push_back({b + "attn.proj.bias", {d}});
    l.push_back({b + "ls1.gamma", {d}});
    l.push_back({b + "norm2.weight", {d}});
    l.push_back({b + "norm2.bias", {d}});
    if (a.swiglu) {
      l.push_back({b + "mlp.w12.weight", {2 * hidden, d}});
      l.push_back({b + "mlp.w12.bias", {2 * hidden}});
      l.push_back({b + "mlp.w3.weight", {d, hidden}});
      l.push_back({b + "mlp.w3.bias", {d}});
    } else {
      l.push_back({b + "mlp.fc1.weight", {hidden, d}});
      l.push_back({b + "mlp.fc1.bias", {hidden}});
      l.push_back({b + "mlp.fc2.weight", {d, hidden}});
      l.push_back({b + "mlp.fc2.bias", {d}});
    }
    l.push_back({b + "ls2.gamma", {d}});
  }
  l.push_back({"norm.weight", {d}});
  l.push_back({"norm.bias", {d}});
  return l;
}

bool looks_like_dinov2(const std::vector<std::string>& keys) {
  bool cls = false, patch = false;
  for (const auto& k : keys) cls |= k == "cls_token", patch |= k == "patch_embed.proj.weight";
  return cls && patch;
}

DinoV2BlockImpl::DinoV2BlockImpl(int64_t dim, int64_t heads, bool swiglu) : heads_(heads), swiglu_(swiglu) {
  norm1_ = register_module("norm1", layer_norm(dim));
  auto attn = holder(*this, "attn");
  qkv_ = attn->register_module("qkv", torch::nn::Linear(dim, 3 * dim));
  proj_ = attn->register_module("proj", torch::nn::Linear(dim, dim));
  gamma1_ = holder(*this, "ls1")->register_parameter("gamma", torch::ones({dim}));
  norm2_ = register_module("norm2", layer_norm(dim));
  auto mlp = holder(*this, "mlp");
  if (swiglu) {
    const int64_t h = swiglu_hidden(dim);
    fc1_ = mlp->register_module("w12", torch::nn::Linear(dim, 2 * h));
    fc2_ = mlp->register_module("w3", torch::nn::Linear(h, dim));
  } else {
    fc1_ = mlp->register_module("fc1", torch::nn::Linear(dim, 4 * dim));
    fc2_ = mlp->register_module("fc2", torch::nn::Linear(4 * dim, dim));
  }
  gamma2_ = holder(*this, "ls2")->register_parameter("gamma", torch::ones({dim}));
}

torch::Tensor DinoV2BlockImpl::feed_forward(const torch::Tensor& x) {
  if (!swiglu_) return fc2_(F::gelu(fc1_(x)));  // exact (erf) GELU, nn.GELU's default
  const auto x12 = fc1_(x).chunk(2, -1);
  return fc2_(F::silu(x12[0]) * x12[1]);
}

torch::Tensor DinoV2BlockImpl::forward(torch::Tensor x) {
  const int64_t b = x.size(0), n = x.size(1), c = x.size(2), hd = c / heads_;
  // Multi-head self-attention: softmax(q k^T / sqrt(head_dim)) v per head (Vaswani et al. 2017, eq. 1).
  const torch::Tensor qkv = qkv_(norm1_(x)).reshape({b, n, 3, heads_, hd}).permute({2, 0, 3, 1, 4});
  const torch::Tensor q = qkv[0] * (1.0 / std::sqrt(static_cast<double>(hd))), k = qkv[1], v = qkv[2];
  const torch::Tensor attn = torch::matmul(q, k.transpose(-2, -1)).softmax(-1);
  const torch::Tensor a = proj_(torch::matmul(attn, v).transpose(1, 2).reshape({b, n, c}));
  x = x + a * gamma1_;
  return x + feed_forward(norm2_(x)) * gamma2_;
}

DinoV2Impl::DinoV2Impl(const DinoV2Arch& a) : arch_(a) {
  const int64_t d = a.dim;
  cls_token_ = register_parameter("cls_token", torch::zeros({1, 1, d}));
  pos_embed_ = register_parameter("pos_embed", torch::zeros({1, kGrid * kGrid + 1, d}));
  mask_token_ = register_parameter("mask_token", torch::zeros({1, d}));  // training only; in the file
  patch_ = holder(*this, "patch_embed")
               ->register_module("proj", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, d, kPatch).stride(kPatch)));
  auto blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < a.depth; ++i) {
    blocks_.emplace_back(d, a.heads, a.swiglu);
    blocks->push_back(blocks_.back());
  }
  norm_ = register_module("norm", layer_norm(d));
}

torch::Tensor DinoV2Impl::position_embedding(int64_t h, int64_t w) const {
  const int64_t n = pos_embed_.size(1) - 1, d = pos_embed_.size(2);
  if (h * w == n && h == w) return pos_embed_;
  const torch::Tensor pos = pos_embed_.to(torch::kFloat);
  const torch::Tensor grid = pos.slice(1, 1).reshape({1, kGrid, kGrid, d}).permute({0, 3, 1, 2});
  // The official code passes scale factors, not the size: the kernel samples at (i + 0.5) / s - 0.5
  // with s = (h + 0.1) / 37, not h / 37.
  const double sh = (static_cast<double>(h) + kInterpolateOffset) / kGrid;
  const double sw = (static_cast<double>(w) + kInterpolateOffset) / kGrid;
  const torch::Tensor g = at::upsample_bicubic2d(grid, {h, w}, /*align_corners=*/false, sh, sw);
  return torch::cat({pos.slice(1, 0, 1), g.permute({0, 2, 3, 1}).reshape({1, h * w, d})}, 1).to(pos_embed_.dtype());
}

torch::Tensor DinoV2Impl::forward(const torch::Tensor& x) {
  if (x.dim() != 4 || x.size(1) != 3 || x.size(2) % kPatch || x.size(3) % kPatch)
    fail("DINOv2 input: shape ", x.sizes(), "; expected [B, 3, H, W] with H and W multiples of ", kPatch);
  const int64_t b = x.size(0), h = x.size(2) / kPatch, w = x.size(3) / kPatch;
  torch::Tensor t = patch_(x).flatten(2).transpose(1, 2);  // [B, h w, dim]
  t = torch::cat({cls_token_.expand({b, 1, -1}), t}, 1) + position_embedding(h, w);
  for (auto& blk : blocks_) t = blk(t);
  return norm_(t).select(1, 0);
}

torch::Tensor dinov2_input(const torch::Tensor& images) {
  torch::InferenceMode guard;
  if (images.dim() != 4 || (images.size(1) != 1 && images.size(1) != 3))
    fail("DINOv2 input: images of shape ", images.sizes(), "; expected [B, 1 or 3, H, W]");
  torch::Tensor u = (images.to(torch::kCPU, torch::kFloat) * 255).round().clamp(0, 255).to(torch::kByte);
  if (u.size(1) == 1) u = u.expand({-1, 3, -1, -1});
  const torch::Tensor x = pil_bicubic_resize(u, kDinoV2Input, kDinoV2Input).to(torch::kFloat) / 255;
  // torchvision's Normalize, in float32: (x - mean) / std per channel.
  const auto opt = torch::TensorOptions().dtype(torch::kFloat);
  const torch::Tensor mean = torch::tensor({0.485f, 0.456f, 0.406f}, opt).view({1, 3, 1, 1});
  const torch::Tensor std = torch::tensor({0.229f, 0.224f, 0.225f}, opt).view({1, 3, 1, 1});
  return ((x - mean) / std).contiguous();
}

DinoV2Extractor::DinoV2Extractor(const std::string& weights, torch::Device device)
    : DinoV2Extractor(weights, torch_file::load(weights), device) {}

DinoV2Extractor::DinoV2Extractor(const std::string& weights, const TensorMap& sd, torch::Device device)
    : device_(device) {
  const auto cls = sd.find("cls_token");
  if (cls == sd.end() || cls->second.dim() != 3)
    fail(weights, ": no tensor 'cls_token' of shape [1, 1, dim]; expected a DINOv2 backbone file "
         "(dinov2_vit{s,b,l,g}14_pretrain.pth; scripts/download_dinov2.sh fetches one)");
  const int64_t dim = cls->second.size(2);
  const DinoV2Arch* arch = nullptr;
  std::vector<std::string> known;
  for (const auto& a : dinov2_archs()) {
    if (a.dim == dim) arch = &a;
    known.push_back(a.title + " " + std::to_string(a.dim));
  }
  if (!arch) fail(weights, ": a DINOv2 file of width ", dim, " (cls_token ", cls->second.sizes(),
                  "); expected one of the released backbones' widths: ", join_words(known, ", "));
  net_ = DinoV2(*arch);
  load_state_dict(*net_, sd, weights);  // names every missing, unexpected or misshapen tensor
  for (const auto& [k, t] : sd)
    if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>()) fail(weights, ": tensor '", k, "' is not finite");
  net_->eval();
  net_->to(device);
  identity_ = "dinov2_" + arch->name + "-" + weights_hash(sd);
}

FeatureOutput DinoV2Extractor::features(const torch::Tensor& prepared, bool want_logits) const {
  if (want_logits) fail("DINOv2 features have no class logits (no Inception Score or class accuracy in them)");
  torch::InferenceMode guard;
  // The linear layers' products are large and called from this thread alone (core/threads.h).
  const BlasThreadsScope blas(at::get_num_threads());
  FeatureOutput out;
  out.pool = net_->forward(prepared.to(device_, torch::kFloat)).to(torch::kFloat);
  return out;
}

}  // namespace hamgan::metrics
