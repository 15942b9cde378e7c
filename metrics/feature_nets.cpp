// The feature network registry: a new network is its own file (its FeatureNet) plus one line here.
#include "metrics/feature_nets.h"

#include <iostream>
#include <map>
#include <mutex>
#include <optional>

#include "core/error.h"
#include "core/word_list.h"
#include "io/file_identity.h"
#include "io/torch_file.h"
#include "metrics/classifier.h"
#include "metrics/dinov2.h"
#include "io/regular_file.h"

namespace hamgan::metrics {

namespace {

bool has_key_prefix(const WeightFile& f, const std::string& prefix) {
  for (const auto& k : f.keys)
    if (k.compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

std::unique_ptr<FeatureNet> open_inception(WeightFile& f, const FeatureNetOptions& o) {
  return std::make_unique<InceptionExtractor>(f.path, o.resize, o.device, o.channels_last);
}

std::unique_ptr<FeatureNet> open_classifier(WeightFile& f, const FeatureNetOptions& o) {
  auto net = std::make_unique<ClassifierExtractor>(f.path, o.device);
  const auto& i = net->info();
  std::cerr << "features: " << f.path << " (" << net->identity() << ", " << i.options.n_classes << " classes, "
            << i.options.resolution << "x" << i.options.resolution << "x" << i.options.channels << ")\n";
  return net;
}

std::unique_ptr<FeatureNet> open_dinov2(WeightFile& f, const FeatureNetOptions& o) {
  const TensorMap sd = torch_file::load_bytes(f.bytes, f.path);
  f.bytes = {};
  auto net = std::make_unique<DinoV2Extractor>(f.path, sd, o.device);
  std::cerr << "features: " << f.path << " (DINOv2 " << net->arch().title << ", " << net->arch().dim
            << "-d class token, " << net->identity() << ")\n";
  return net;
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

}  // namespace

std::string WeightFile::describe() const {
  switch (kind) {
    case Classifier: return "a hamgan classifier file";
    case TorchScript: return "a TorchScript archive";
    case StateDict: {
      std::vector<std::string> first(keys.begin(), keys.begin() + std::min<size_t>(keys.size(), 4));
      return "a state dict of " + std::to_string(keys.size()) + " tensors (" + join_words(first) +
             (keys.size() > 4 ? ", ..." : "") + ")";
    }
    case Unreadable: break;
  }
  return "neither a state dict nor a TorchScript or classifier file (" + why + ")";
}

WeightFile read_weight_file(const std::string& path) {
  io::require_regular_file(path, "a feature network's weight file");
  WeightFile f;
  f.path = path;
  if (classifier_output().recognises_file(path)) {
    f.kind = WeightFile::Classifier;
    return f;
  }
  if (is_torchscript_file(path)) {
    f.kind = WeightFile::TorchScript;
    return f;
  }
  f.bytes = torch_file::read_file(path);
  try {
    for (const auto& [k, t] : torch_file::read_index(f.bytes, path).tensors) f.keys.push_back(k);
    f.kind = WeightFile::StateDict;
  } catch (const Error& e) {
    f.kind = WeightFile::Unreadable, f.why = e.what(), f.bytes = {};
  }
  return f;
}

const std::vector<FeatureNetEntry>& feature_net_registry() {
  // name, help, recognises, open, owns (identity), distance
  static const std::vector<FeatureNetEntry> all = {
      {"inception", "Inception-v3 pool3 (2048-d), pytorch-fid's weights or NVIDIA's TorchScript file: FID comparable with published figures",
       [](const WeightFile& f) { return f.kind == WeightFile::TorchScript || has_key_prefix(f, "Mixed_7c."); },
       open_inception, [](const std::string& id) { return id.empty(); }},
      {"classifier", "a domain classifier of `hamgan classifier train`: FID and class accuracy for data far from ImageNet",
       [](const WeightFile& f) { return f.kind == WeightFile::Classifier; }, open_classifier,
       [](const std::string& id) { return starts_with(id, "classifier-"); }},
      {"dinov2", "DINOv2 ViT-S/14, B/14, L/14 or g/14 (dinov2_vit*14_pretrain.pth): FD_DINOv2, closer to human judgement",
       [](const WeightFile& f) { return f.kind == WeightFile::StateDict && looks_like_dinov2(f.keys); }, open_dinov2,
       [](const std::string& id) { return starts_with(id, "dinov2_"); }, "fd_dinov2"},
  };
  return all;
}

std::vector<std::string> feature_net_names() {
  std::vector<std::string> n;
  for (const auto& e : feature_net_registry()) n.push_back(e.name);
  return n;
}

const FeatureNetEntry& feature_net_entry(const std::string& name) {
  for (const auto& e : feature_net_registry())
    if (e.name == name) return e;
  fail("unknown feature network '", name, "' (known: ", join_words(feature_net_names()), ")");
}

std::string distance_name(const std::string& identity) {
  for (const auto& e : feature_net_registry())
    if (e.owns(identity)) return e.distance;
  return "fid";
}

namespace {
const FeatureNetEntry& recognise(const WeightFile& f, const std::string& key) {
  for (const auto& e : feature_net_registry())
    if (e.recognises(f)) return e;
  std::string known;
  for (const auto& e : feature_net_registry()) known += "\n  " + e.name + ": " + e.help;
  fail(key, " ", f.path, ": ", f.describe(), " is no feature network hamgan knows; expected one of:", known);
}
}  // namespace

std::unique_ptr<FeatureNet> open_feature_net(const std::string& path, const FeatureNetOptions& o, const std::string& key) {
  WeightFile f = read_weight_file(path);
  return recognise(f, key).open(f, o);
}

std::string feature_net_kind(const std::string& path, const std::string& key) {
  // Asked by every check of a request: the file (4.5 GB for ViT-g/14) is read once while it is
  // the same file.
  static std::mutex mutex;
  static std::map<std::string, std::pair<io::FileId, std::string>> known;
  const std::optional<io::FileId> id = io::file_id(path);
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = known.find(path); id && it != known.end() && it->second.first == *id) return it->second.second;
  std::string name = recognise(read_weight_file(path), key).name;
  if (id) known[path] = {*id, name};
  return name;
}

}  // namespace hamgan::metrics
