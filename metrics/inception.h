// Inception-v3 as pytorch-fid builds its FID network (Szegedy et al. 2016; Heusel et al. 2017):
// torchvision's topology with 1008 classes and pytorch-fid's four changed blocks (the branch
// pools of Mixed_5b-d, Mixed_6b-e and Mixed_7b average without padding; Mixed_7c's pool branch
// is a 3x3/1 max pool). Module names match the published state dict.
#pragma once
#include <torch/script.h>
#include <torch/torch.h>

#include <memory>
#include <string>

#include "metrics/feature_net.h"

namespace hamgan::metrics {

// Input scaling: pytorch-fid (bilinear, align_corners = false, then 2x - 1) or torch-fidelity's
// TensorFlow 1.x bilinear with (255x - 128) / 128.
enum class Resize { Torch, TF };
Resize parse_resize(const std::string& s);  // "torch" | "tf"

// Width of the pool3 features FID statistics are made of.
constexpr int64_t kInceptionFeatures = 2048;

struct InceptionOutput {
  torch::Tensor pool;             // [B, 2048] average pool after Mixed_7c
  torch::Tensor logits;           // [B, 1008] fc with bias (undefined for TorchScript weights)
  torch::Tensor logits_unbiased;  // [B, 1008] fc without bias, for the Inception Score
};

class FidInception3Impl : public torch::nn::Module {
 public:
  FidInception3Impl();
  // x: [B, 3, 299, 299] already scaled to the network's input range.
  InceptionOutput forward(torch::Tensor x);

 private:
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> stem_;
  torch::nn::AnyModule b5b_, b5c_, b5d_, b6a_, b6b_, b6c_, b6d_, b6e_, b7a_, b7b_, b7c_;
  torch::nn::Linear fc_{nullptr};
};
TORCH_MODULE(FidInception3);

// [B, C, H, W] images in [0, 1] (C = 1 is repeated to 3) -> [B, 3, 299, 299] network input.
torch::Tensor inception_input(const torch::Tensor& images, Resize mode);

// Whether `path` is a TorchScript archive (NVIDIA's inception-2015-12-05.pt), not a torch.save file.
bool is_torchscript_file(const std::string& path);

// The feature extractor the FID/IS/KID code uses: weights from a state dict (legacy or zip
// torch.save: pytorch-fid's or torch-fidelity's file) or NVIDIA's TorchScript inception-2015-12-05.pt.
class InceptionExtractor : public FeatureNet {
 public:
  InceptionExtractor(const std::string& weights, Resize mode, torch::Device device, bool channels_last = true);
  // images: [B, C, H, W] float in [0, 1]; run in inference mode. Equals forward(prepare(images)).
  InceptionOutput run(const torch::Tensor& images, bool want_logits) const;
  // Resize/scale (or, TorchScript, uint8 conversion) on the CPU: image decoding threads call it.
  torch::Tensor prepare(const torch::Tensor& images) const override;
  InceptionOutput forward(const torch::Tensor& prepared, bool want_logits) const;
  FeatureOutput features(const torch::Tensor& prepared, bool want_logits) const override;
  bool has_logits() const override { return !jit_; }
  torch::Device device() const override { return device_; }

 private:
  std::string path_;
  Resize mode_;
  torch::Device device_;
  bool channels_last_;
  mutable FidInception3 net_{nullptr};  // forward is logically const (eval mode)
  std::shared_ptr<torch::jit::Module> jit_;
};

}  // namespace hamgan::metrics
