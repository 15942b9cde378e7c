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
#include <ostream>
#include <string>
#include <vector>

#include "io/output_path.h"
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
  int64_t test_n = 0;                    // images that accuracy counts; 0: unknown (older files)
  double chance = -1;                    // the accuracy of guessing on that split; < 0: unknown (1 / classes)
};

// Whether a classifier tells its classes apart: "clearly above chance" means both
//  - significance: at chance level p0 (the larger of 1/classes and the evaluated split's
//    largest class share, i.e. always answering its most frequent class), the one-sided exact
//    binomial probability of at least `hits` right out of `n` is below kChanceAlpha (1%), and
//  - effect: the accuracy is at least p0 + kChanceMargin (1 - p0), a twentieth of the way from
//    chance to perfect (a huge test split makes 0.11 against 0.10 "significant", not useful).
// A classifier that fails it gives FIDs in features that carry no class information and class
// accuracies that are guesses: `classifier train` does not write one, and using one is refused.
constexpr double kChanceAlpha = 0.01, kChanceMargin = 0.05;
struct ChanceVerdict {
  int64_t hits = 0, n = 0;
  double accuracy = 0, chance = 0, p_value = 1, needed = 0;  // needed: the effect bound
  bool above = false;
  std::string text() const;  // "0.0833 (2 of 24), chance 0.1000, binomial p 0.71, needed >= 0.1450"
};
// P(X >= hits) for X ~ Binomial(n, p).
double binomial_upper_tail(int64_t hits, int64_t n, double p);
ChanceVerdict chance_verdict(int64_t hits, int64_t n, double chance);
// The fewest evaluated images at which a classifier of `n_classes` classes can pass with one
// mistake when they are split as evenly as possible (one class then has ceil(n / classes)):
// 12 for 2 classes, 8 for 3, 7 for 4, 5 for 5 or more. A smaller held-out split shows nothing.
int64_t min_images_to_beat_chance(int64_t n_classes);
// At use: an error naming `path` when the file's recorded accuracy is not clearly above chance
// (files without a held-out size: below the effect bound at chance 1/classes); a warning on
// `warn` when it records no accuracy at all.
void check_above_chance(const ClassifierInfo& info, const std::string& path, std::ostream& warn);

// One torch.save-compatible dict (torch.load reads it): format "hamgan-classifier", version,
// the options, class names, data, test accuracy and `state_dict`. Written atomically
// (io/atomic_file.h), under io/output_path.h's rule with classifier_output(): it replaces an
// earlier classifier only, never a GAN checkpoint or any other file.
void save_classifier(const std::string& path, DomainClassifier& net, const ClassifierInfo& info);
// A file save_classifier wrote, recognised by its content: a zip archive whose pickle starts
// with the format entry "hamgan-classifier".
const io::OutputKind& classifier_output();
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
  mutable std::once_flag warned_size_;      // images of another size: said once
};

}  // namespace hamgan::metrics
