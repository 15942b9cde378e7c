// The feature networks scores are computed in, created by name or recognised from a weight
// file's contents (as the context modules and the metrics are listed: metrics/feature_nets.cpp
// holds one line per network; each network's code lives in its own file).
//   inception   Inception-v3 pool3 as pytorch-fid (metrics/inception.h): comparable with published FIDs
//   classifier  a domain classifier of `hamgan classifier train` (metrics/classifier.h)
//   dinov2      DINOv2's class token as dgm-eval (metrics/dinov2.h): FD_DINOv2
// tests/test_feature_nets.cpp sweeps every registered network.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "metrics/feature_net.h"
#include "metrics/inception.h"

namespace hamgan::metrics {

// What a weight file holds, read once before a network is chosen.
struct WeightFile {
  std::string path;
  enum Kind { Classifier, TorchScript, StateDict, Unreadable } kind = Unreadable;
  std::vector<std::string> keys;  // StateDict: its tensors' names, in file order
  std::vector<uint8_t> bytes;     // StateDict: the file, for the network that reads it
  std::string why;                // Unreadable: the reader's error
  std::string describe() const;   // "a state dict of 12 tensors (a, b, c, ...)", for errors
};
WeightFile read_weight_file(const std::string& path);

struct FeatureNetOptions {
  torch::Device device = torch::kCPU;
  Resize resize = Resize::Torch;  // Inception's input scaling
  bool channels_last = false;
};

struct FeatureNetEntry {
  std::string name;  // one word: eval docs, messages
  std::string help;  // what it is and when to use it
  std::function<bool(const WeightFile&)> recognises;
  std::function<std::unique_ptr<FeatureNet>(WeightFile&, const FeatureNetOptions&)> open;
  // Whether a FeatureNet::identity() is this network's (its statistics and score rows).
  std::function<bool(const std::string& identity)> owns;
  // Its Frechet distance's name where it is not the FID (DINOv2's: fd_dinov2).
  std::string distance = "fid";
};

const std::vector<FeatureNetEntry>& feature_net_registry();
std::vector<std::string> feature_net_names();
const FeatureNetEntry& feature_net_entry(const std::string& name);  // error lists the known ones
// The name of the Frechet distance in the features of the network of `identity` ("" is
// Inception's): "fid", or the owning network's own ("fd_dinov2"), so that one is never read as the other.
std::string distance_name(const std::string& identity);

// The network `path` holds, recognised from its contents; `key` (the flag or config key that
// named the file) leads the error for a file no network recognises, which says what was found.
std::unique_ptr<FeatureNet> open_feature_net(const std::string& path, const FeatureNetOptions& o,
                                             const std::string& key);
// The registry name of the network in `path` (reads the file), for checks before scoring.
std::string feature_net_kind(const std::string& path, const std::string& key);

}  // namespace hamgan::metrics
