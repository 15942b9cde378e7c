// DINOv2 (Oquab et al. 2023) as a feature network: the self-supervised ViT whose features
// Stein et al. (NeurIPS 2023, "Exposing flaws of generative model evaluation metrics") showed
// to rank generated images as people do, where Inception's do not. Scores in it are named
// FD_DINOv2, not FID. Read from the released weight files (dinov2_vit{s,b,l,g}14_pretrain.pth)
// with hamgan's own torch-file reader; the architecture is recognised from the tensors.
//
// Input as dgm-eval prepares it: the 8-bit image resized to 224 x 224 with Pillow's bicubic
// filter (metrics/pil_resize.h), scaled to [0, 1] and normalised with ImageNet's mean and std.
// Features: the class token after the final LayerNorm (x_norm_clstoken), as dgm-eval takes.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/state_dict.h"
#include "metrics/feature_net.h"

namespace hamgan::metrics {

struct DinoV2Arch {
  std::string name;     // "vits14": the released file is dinov2_<name>_pretrain.pth
  std::string title;    // "ViT-S/14"
  int64_t dim, depth, heads;
  bool swiglu;          // ViT-g/14: a SwiGLU feed-forward (w12, w3) in place of fc1-GELU-fc2
};
// The four released backbones.
const std::vector<DinoV2Arch>& dinov2_archs();

// Tensors of a released file, in its order: the layout a file must have exactly.
std::vector<std::pair<std::string, std::vector<int64_t>>> dinov2_layout(const DinoV2Arch& a);

// Whether a state dict's keys look like a DINOv2 backbone (any size; the load names what else
// is wrong).
bool looks_like_dinov2(const std::vector<std::string>& keys);

// One transformer block (pre-norm, LayerScale): x += ls1 * attn(norm1(x)); x += ls2 * mlp(norm2(x)).
class DinoV2BlockImpl : public torch::nn::Module {
 public:
  DinoV2BlockImpl(int64_t dim, int64_t heads, bool swiglu);
  torch::Tensor forward(torch::Tensor x);
  // The feed-forward alone: GELU MLP, or SwiGLU w3(silu(x1) * x2) with [x1, x2] = w12(x).
  torch::Tensor feed_forward(const torch::Tensor& x);

 private:
  int64_t heads_;
  bool swiglu_;
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr}, fc1_{nullptr}, fc2_{nullptr};
  torch::Tensor gamma1_, gamma2_;
};
TORCH_MODULE(DinoV2Block);

class DinoV2Impl : public torch::nn::Module {
 public:
  explicit DinoV2Impl(const DinoV2Arch& a);
  // x: [B, 3, H, W] normalised, H and W multiples of 14 -> [B, dim] final-normed class tokens.
  torch::Tensor forward(const torch::Tensor& x);
  // The released pos_embed (a 37 x 37 grid from 518 px training) for an h x w grid of patches:
  // bicubic, with the official code's scale factor (h + 0.1) / 37 (its interpolate_offset).
  torch::Tensor position_embedding(int64_t h, int64_t w) const;
  const DinoV2Arch& arch() const { return arch_; }

 private:
  DinoV2Arch arch_;
  torch::Tensor cls_token_, pos_embed_, mask_token_;
  torch::nn::Conv2d patch_{nullptr};
  std::vector<DinoV2Block> blocks_;
  torch::nn::LayerNorm norm_{nullptr};
};
TORCH_MODULE(DinoV2);

constexpr int64_t kDinoV2Input = 224;  // dgm-eval's resize

// dgm-eval's input: [B, 1 or 3, H, W] in [0, 1] -> 8 bit (as saved images are), Pillow bicubic to
// 224 x 224, /255, ImageNet mean and std. A gray image is repeated to RGB, as PIL's convert does.
torch::Tensor dinov2_input(const torch::Tensor& images);

class DinoV2Extractor : public FeatureNet {
 public:
  // `weights`: a released file (or one of its exact layout). The state dict may be given when
  // the caller has read it already.
  DinoV2Extractor(const std::string& weights, torch::Device device);
  DinoV2Extractor(const std::string& weights, const TensorMap& state_dict, torch::Device device);
  torch::Tensor prepare(const torch::Tensor& images) const override { return dinov2_input(images); }
  FeatureOutput features(const torch::Tensor& prepared, bool want_logits) const override;
  bool has_logits() const override { return false; }
  // "dinov2_vits14-<hash of the weights>": statistics of other weights never compare.
  std::string identity() const override { return identity_; }
  torch::Device device() const override { return device_; }
  const DinoV2Arch& arch() const { return net_->arch(); }

 private:
  torch::Device device_;
  mutable DinoV2 net_{nullptr};  // forward is logically const (no state)
  std::string identity_;
};

}  // namespace hamgan::metrics
