// A small domain classifier whose penultimate features stand in for Inception's in FID when
// ImageNet's classes do not fit the data (Fashion-MNIST, medical, satellite): `hamgan
// classifier train` fits it, `hamgan fid --features clf.pt` scores in its features and also
// reports class accuracy. Used to measure only, never as a training signal.
//
// Architecture (VGG-style, BN after every conv): `blocks` times [conv3x3 -> BN -> ReLU ->
// maxpool 2] with width, 2 width, 4 width, ... (capped at 8 width) channels until the map is
// 4..7 px, flatten, fc -> ReLU (the features), fc -> class logits. Input: images exactly as
// the GAN's samples are, [B, channels, resolution, resolution] in [-1, 1].
#pragma once
#include <torch/torch.h>

#include <mutex>
#include <string>
#include <vector>

#include "metrics/feature_net.h"

namespace hamgan::metrics {

struct ClassifierOptions {
  int64_t resolution = 32, channels = 1, n_classes = 10;
  int64_t width = 16;         // channels of the first conv
  int64_t feature_dim = 128;  // penultimate features (the FID statistics' dimension)
};

// Validates the options ("what" names their source in errors).
void check_classifier_options(const ClassifierOptions& o, const std::string& what);
int64_t classifier_blocks(int64_t resolution);  // halvings until the map is < 8 px

class DomainClassifierImpl : public torch::nn::Module {
 public:
  explicit DomainClassifierImpl(const ClassifierOptions& o);
  // x in [-1, 1] -> {features [B, feature_dim] (after ReLU), logits [B, n_classes]}.
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& x);
  const ClassifierOptions& options() const { return opt_; }

 private:
  ClassifierOptions opt_;
  torch::nn::Sequential body_{nullptr};
  torch::nn::Linear fc_{nullptr}, head_{nullptr};
};
TORCH_MODULE(DomainClassifier);

// What a classifier file records besides the weights.
struct ClassifierInfo {
  ClassifierOptions options;
  std::vector<std::string> class_names;  // may be empty
  std::string data;                      // the source it was trained on
  double test_accuracy = -1;             // on its test / held-out split; < 0: unknown
};

// One torch.save-compatible dict (torch.load reads it): format "hamgan-classifier", version,
// the options, class names, data, test accuracy and `state_dict`. Written atomically.
void save_classifier(const std::string& path, DomainClassifier& net, const ClassifierInfo& info);
// Rebuilds the network from the file (eval mode); every field is validated and errors name
// the file.
DomainClassifier load_classifier(const std::string& path, ClassifierInfo* info = nullptr);

// A content hash of the options and weights: "classifier-<feature_dim>d-<16 hex digits>".
std::string classifier_identity(DomainClassifier& net);

// The classifier as a FeatureNet: prepare() maps [0, 1] images to [-1, 1] at the network's
// resolution (bilinear, antialiased, when the size differs) and channels (gray repeated to
// RGB, RGB averaged to gray).
class ClassifierExtractor : public FeatureNet {
 public:
  ClassifierExtractor(const std::string& path, torch::Device device);
  torch::Tensor prepare(const torch::Tensor& images) const override;
  FeatureOutput features(const torch::Tensor& prepared, bool want_logits) const override;
  bool has_logits() const override { return true; }
  int64_t n_classes() const override { return info_.options.n_classes; }
  std::string identity() const override { return identity_; }
  torch::Device device() const override { return device_; }
  const ClassifierInfo& info() const { return info_; }

 private:
  ClassifierInfo info_;
  torch::Device device_;
  std::string identity_;
  mutable DomainClassifier net_{nullptr};  // forward is logically const (eval mode)
  mutable std::once_flag warned_size_;      // images of another size: said once (issue 25)
};

}  // namespace hamgan::metrics
