// The network FID statistics are computed in: Inception-v3 (metrics/inception.h, the
// standard) or a domain classifier trained by `hamgan classifier train`
// (metrics/classifier.h, for data whose classes ImageNet's do not fit). Every FID path
// (image directories, data sources, a checkpoint's samples) takes a FeatureNet.
#pragma once
#include <torch/torch.h>

#include <string>

namespace hamgan::metrics {

struct FeatureOutput {
  torch::Tensor pool;    // [B, dim] the features statistics are computed in
  torch::Tensor logits;  // when asked: Inception's fc without bias (IS) or the classifier's class logits
};

class FeatureNet {
 public:
  virtual ~FeatureNet() = default;
  // [B, C, H, W] images in [0, 1] -> network input, on the CPU (decoding threads call it).
  virtual torch::Tensor prepare(const torch::Tensor& images) const = 0;
  // Inference mode; `prepared` comes from prepare().
  virtual FeatureOutput features(const torch::Tensor& prepared, bool want_logits) const = 0;
  virtual bool has_logits() const = 0;
  // > 0: logits are class logits (class accuracy, no Inception Score); 0: Inception's.
  virtual int64_t n_classes() const { return 0; }
  // Stored with statistics so ones of different networks are never compared. "" is
  // Inception (pytorch-fid's .npz carry no name).
  virtual std::string identity() const { return ""; }
  virtual torch::Device device() const = 0;
};

// For messages: "Inception-v3 pool3" or the identity.
std::string describe_feature_net(const std::string& identity);

}  // namespace hamgan::metrics
