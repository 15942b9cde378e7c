#include "metrics/classifier.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "core/error.h"
#include "core/state_dict.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "io/zip_reader.h"
#include "io/regular_file.h"

namespace hamgan::metrics {

namespace F = torch::nn::functional;

constexpr const char* kFormat = "hamgan-classifier";
constexpr int64_t kVersion = 1;

int64_t classifier_blocks(int64_t resolution) {
  int64_t blocks = 0;
  for (int64_t s = resolution; s >= 8; s /= 2) ++blocks;
  return blocks;
}

void check_classifier_options(const ClassifierOptions& o, const std::string& what) {
  if (o.resolution < 8 || o.resolution > 1024) fail(what, ": resolution ", o.resolution, "; expected 8..1024");
  if (o.channels != 1 && o.channels != 3) fail(what, ": channels ", o.channels, "; expected 1 or 3");
  if (o.n_classes < 2 || o.n_classes > 100000) fail(what, ": n_classes ", o.n_classes, "; expected 2..100000");
  if (o.width < 1 || o.width > 1024) fail(what, ": width ", o.width, "; expected 1..1024");
  if (o.feature_dim < 2 || o.feature_dim > 65536) fail(what, ": feature_dim ", o.feature_dim, "; expected 2..65536");
}

DomainClassifierImpl::DomainClassifierImpl(const ClassifierOptions& o) : opt_(o) {
  check_classifier_options(o, "classifier");
  body_ = torch::nn::Sequential();
  int64_t in = o.channels, s = o.resolution, ch = o.width;
  for (int64_t b = 0; b < classifier_blocks(o.resolution); ++b) {
    body_->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, ch, 3).padding(1).bias(false)));
    body_->push_back(torch::nn::BatchNorm2d(ch));
    body_->push_back(torch::nn::ReLU());
    body_->push_back(torch::nn::MaxPool2d(2));
    in = ch, s /= 2, ch = std::min(2 * ch, 8 * o.width);
  }
  register_module("body", body_);
  fc_ = register_module("fc", torch::nn::Linear(in * s * s, o.feature_dim));
  head_ = register_module("head", torch::nn::Linear(o.feature_dim, o.n_classes));
}

std::pair<torch::Tensor, torch::Tensor> DomainClassifierImpl::forward(const torch::Tensor& x) {
  const torch::Tensor f = torch::relu(fc_(body_->forward(x).flatten(1)));
  return {f, head_(f)};
}

namespace {

c10::IValue get(const c10::impl::GenericDict& d, const std::string& key, const std::string& path) {
  const auto it = d.find(key);
  if (it == d.end()) fail(path, ": no entry '", key, "' (not a hamgan classifier file?)");
  return it->value();
}

int64_t get_int(const c10::impl::GenericDict& d, const std::string& key, const std::string& path) {
  const c10::IValue v = get(d, key, path);
  if (!v.isInt()) fail(path, ": entry '", key, "' is a ", v.tagKind(), "; expected an integer");
  return v.toInt();
}

}  // namespace

void save_classifier(const std::string& path, DomainClassifier& net, const ClassifierInfo& info) {
  const ClassifierOptions& o = net->options();
  c10::impl::GenericDict d(c10::StringType::get(), c10::AnyType::get());
  d.insert("format", std::string(kFormat));
  d.insert("version", kVersion);
  d.insert("resolution", o.resolution);
  d.insert("channels", o.channels);
  d.insert("n_classes", o.n_classes);
  d.insert("width", o.width);
  d.insert("feature_dim", o.feature_dim);
  c10::List<std::string> names;
  for (const auto& n : info.class_names) names.push_back(n);
  d.insert("class_names", names);
  d.insert("data", info.data);
  d.insert("test_accuracy", info.test_accuracy);
  d.insert("test_n", info.test_n);
  d.insert("chance", info.chance);
  c10::Dict<std::string, at::Tensor> sd;
  for (const auto& [k, t] : state_dict(*net)) sd.insert(k, t.detach().to(torch::kCPU).contiguous());
  d.insert("state_dict", sd);
  const std::vector<char> bytes = torch::pickle_save(d);
  io::check_output_path(path, classifier_output());  // again at the write: the command checked first
  io::write_file_atomically(path, std::string_view(bytes.data(), bytes.size()));
}

const io::OutputKind& classifier_output() {
  static const io::OutputKind k{
      "a classifier file of `hamgan classifier train`",
      [](std::string_view head) { return head.substr(0, 4) == std::string_view("PK\x03\x04", 4); },
      [](const std::string& path) {
        // torch::pickle_save writes the tensors first and the pickle (stored, uncompressed)
        // after them: near its start (after the typed dict's restore_type_tag global) the
        // dict's first entry, "format": kFormat, as two BINUNICODE strings with at most a memo
        // op between.
        std::string pkl;
        try {
          const MappedFile m(path, /*writable=*/false);
          pkl = io::stored_member_prefix(m.data(), m.size(), "/data.pkl", 256);
        } catch (const Error&) {
          return false;
        }
        const std::string key = std::string("X\x06\x00\x00\x00", 5) + "format";
        const std::string value = std::string("X\x11\x00\x00\x00", 5) + kFormat;
        const size_t at = pkl.find(key);
        if (at == std::string::npos) return false;
        const size_t v = pkl.find(value, at + key.size());
        return v != std::string::npos && v - (at + key.size()) <= 8;
      }};
  return k;
}

DomainClassifier load_classifier(const std::string& path, ClassifierInfo* info_out) {
  io::require_regular_file(path, "a classifier file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open the classifier file");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue v;
  try {
    v = torch::pickle_load(bytes);
  } catch (const c10::Error& e) {
    fail(path, ": not a classifier file written by `hamgan classifier train` (", e.what_without_backtrace(), ")");
  }
  if (!v.isGenericDict()) fail(path, ": holds a ", v.tagKind(), "; expected the dict `hamgan classifier train` writes");
  const auto d = v.toGenericDict();
  const c10::IValue fmt = get(d, "format", path);
  if (!fmt.isString() || fmt.toStringRef() != kFormat)
    fail(path, ": format is not '", kFormat, "' (not a hamgan classifier file)");
  const int64_t version = get_int(d, "version", path);
  if (version != kVersion) fail(path, ": classifier format version ", version, "; this hamgan reads version ", kVersion);
  ClassifierInfo info;
  ClassifierOptions& o = info.options;
  o.resolution = get_int(d, "resolution", path);
  o.channels = get_int(d, "channels", path);
  o.n_classes = get_int(d, "n_classes", path);
  o.width = get_int(d, "width", path);
  o.feature_dim = get_int(d, "feature_dim", path);
  check_classifier_options(o, path);
  const c10::IValue names = get(d, "class_names", path);
  if (!names.isList()) fail(path, ": entry 'class_names' is a ", names.tagKind(), "; expected a list of strings");
  for (const c10::IValue& n : names.toListRef()) {
    if (!n.isString()) fail(path, ": entry 'class_names' holds a ", n.tagKind(), "; expected strings");
    info.class_names.push_back(n.toStringRef());
  }
  if (!info.class_names.empty() && static_cast<int64_t>(info.class_names.size()) != o.n_classes)
    fail(path, ": ", info.class_names.size(), " class names for ", o.n_classes, " classes");
  const c10::IValue data = get(d, "data", path), acc = get(d, "test_accuracy", path);
  if (!data.isString() || !acc.isDouble()) fail(path, ": entries 'data' (string) and 'test_accuracy' (float) expected");
  info.data = data.toStringRef();
  info.test_accuracy = acc.toDouble();
  if (!(info.test_accuracy <= 1)) fail(path, ": test_accuracy ", info.test_accuracy, "; expected at most 1 (< 0: unknown)");
  // Files written before the held-out size was recorded have neither entry: unknown.
  if (d.find(std::string("test_n")) != d.end()) {
    info.test_n = get_int(d, "test_n", path);
    if (info.test_n < 0) fail(path, ": test_n ", info.test_n, "; expected >= 0");
  }
  if (d.find(std::string("chance")) != d.end()) {
    const c10::IValue c = get(d, "chance", path);
    if (!c.isDouble()) fail(path, ": entry 'chance' is a ", c.tagKind(), "; expected a float");
    info.chance = c.toDouble();
    if (!(info.chance <= 1)) fail(path, ": chance ", info.chance, "; expected at most 1 (< 0: unknown)");
  }
  const c10::IValue sdv = get(d, "state_dict", path);
  if (!sdv.isGenericDict()) fail(path, ": entry 'state_dict' is a ", sdv.tagKind(), "; expected a dict of tensors");
  TensorMap sd;
  for (const auto& e : sdv.toGenericDict()) {
    if (!e.key().isString() || !e.value().isTensor()) fail(path, ": 'state_dict' holds a non string -> tensor entry");
    sd[e.key().toStringRef()] = e.value().toTensor();
  }
  DomainClassifier net(o);
  load_state_dict(*net, sd, path);
  for (const auto& [k, t] : state_dict(*net))
    if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>()) fail(path, ": weight '", k, "' is not finite");
  net->eval();
  if (info_out) *info_out = info;
  return net;
}

std::string classifier_identity(DomainClassifier& net) {
  // FNV-1a over the options and every tensor's bytes in key order.
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  const ClassifierOptions& o = net->options();
  for (int64_t v : {o.resolution, o.channels, o.n_classes, o.width, o.feature_dim}) mix(&v, sizeof v);
  for (const auto& [k, t] : state_dict(*net)) {
    mix(k.data(), k.size());
    const torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    mix(c.data_ptr(), c.numel() * c.element_size());
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "classifier-%lldd-%016llx", static_cast<long long>(o.feature_dim),
                static_cast<unsigned long long>(h));
  return buf;
}

std::string ChanceVerdict::text() const {
  char b[200];
  std::snprintf(b, sizeof b, "%.4f (%lld of %lld right), chance %.4f, binomial p %.2g, needed >= %.4f", accuracy,
                static_cast<long long>(hits), static_cast<long long>(n), chance, p_value, needed);
  return b;
}

double binomial_upper_tail(int64_t hits, int64_t n, double p) {
  if (hits <= 0) return 1;
  if (hits > n) return 0;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  // Terms in log space (n may be tens of thousands), summed from the largest down.
  const double lp = std::log(p), lq = std::log1p(-p), ln = std::lgamma(static_cast<double>(n) + 1);
  double sum = 0;
  for (int64_t k = hits; k <= n; ++k) {
    const double kk = static_cast<double>(k), rest = static_cast<double>(n - k);
    sum += std::exp(ln - std::lgamma(kk + 1) - std::lgamma(rest + 1) + kk * lp + rest * lq);
  }
  return std::min(1.0, sum);
}

ChanceVerdict chance_verdict(int64_t hits, int64_t n, double chance) {
  ChanceVerdict v;
  v.hits = hits, v.n = n, v.chance = chance;
  v.accuracy = n > 0 ? static_cast<double>(hits) / static_cast<double>(n) : 0;
  v.p_value = n > 0 ? binomial_upper_tail(hits, n, chance) : 1;
  v.needed = chance + kChanceMargin * (1 - chance);
  v.above = n > 0 && v.p_value < kChanceAlpha && v.accuracy >= v.needed;
  return v;
}

int64_t min_images_to_beat_chance(int64_t n_classes) {
  const auto k = static_cast<double>(std::max<int64_t>(2, n_classes));
  for (int64_t n = 2;; ++n) {  // ends: the tail falls like chance^(n-1)
    // The most even split of n images still gives one class ceil(n / k) of them.
    const double chance = std::max(1.0 / k, std::ceil(static_cast<double>(n) / k) / static_cast<double>(n));
    if (chance_verdict(n - 1, n, chance).above) return n;
  }
}

void check_above_chance(const ClassifierInfo& info, const std::string& path, std::ostream& warn) {
  const double uniform = 1.0 / static_cast<double>(info.options.n_classes);
  if (info.test_accuracy < 0) {
    warn << "warning: " << path << " records no held-out accuracy (not written by `hamgan classifier train`?): "
         << "nothing shows that it tells its " << info.options.n_classes
         << " classes apart, so scores in its features may mean nothing\n";
    return;
  }
  const double chance = info.chance > 0 ? info.chance : uniform;
  const auto refuse = [&](const std::string& why) {
    fail(path, ": its held-out accuracy ", why, " is not clearly above chance (a binomial test at ", kChanceAlpha,
         " and at least ", kChanceMargin, " of the way from chance to perfect): FIDs in its features and class "
         "accuracies from it would mean nothing. Train another with `hamgan classifier train` (more steps, more "
         "images per class), which writes only classifiers that pass");
  };
  if (info.test_n > 0) {
    const auto hits = static_cast<int64_t>(std::llround(info.test_accuracy * static_cast<double>(info.test_n)));
    const ChanceVerdict v = chance_verdict(hits, info.test_n, chance);
    if (!v.above) refuse(v.text());
    return;
  }
  // Older files record no held-out size: the effect bound alone, at chance 1/classes.
  const ChanceVerdict v = chance_verdict(0, 0, chance);
  if (info.test_accuracy < v.needed) {
    char b[128];
    std::snprintf(b, sizeof b, "%.4f (held-out size not recorded), chance %.4f, needed >= %.4f", info.test_accuracy,
                  chance, v.needed);
    refuse(b);
  }
}

ClassifierExtractor::ClassifierExtractor(const std::string& path, torch::Device device) : device_(device) {
  net_ = load_classifier(path, &info_);
  check_above_chance(info_, path, std::cerr);
  identity_ = classifier_identity(net_);
  net_->to(device);
}

torch::Tensor ClassifierExtractor::prepare(const torch::Tensor& images) const {
  torch::InferenceMode guard;
  if (images.dim() != 4 || (images.size(1) != 1 && images.size(1) != 3))
    fail("classifier input: images of shape ", images.sizes(), "; expected [B, 1 or 3, H, W]");
  const ClassifierOptions& o = info_.options;
  torch::Tensor x = images.to(torch::kFloat);
  if (x.size(1) != o.channels) x = o.channels == 1 ? x.mean(1, true) : x.expand({-1, 3, -1, -1});
  if (x.size(2) != o.resolution || x.size(3) != o.resolution) {
    std::call_once(warned_size_, [&] {
      std::cerr << "warning: the classifier " << identity_ << " sees " << o.resolution << "x" << o.resolution
                << " images; these are " << x.size(2) << "x" << x.size(3)
                << ", resized (train one at their size: `hamgan classifier train -c CONFIG` uses the GAN's)\n";
    });
    x = F::interpolate(x, F::InterpolateFuncOptions()
                              .size(std::vector<int64_t>{o.resolution, o.resolution})
                              .mode(torch::kBilinear)
                              .align_corners(false)
                              .antialias(x.size(2) > o.resolution || x.size(3) > o.resolution));
  }
  return (x * 2 - 1).contiguous();
}

FeatureOutput ClassifierExtractor::features(const torch::Tensor& prepared, bool want_logits) const {
  torch::InferenceMode guard;
  const auto [f, logits] = net_->forward(prepared.to(device_));
  FeatureOutput out;
  out.pool = f;
  if (want_logits) out.logits = logits;
  return out;
}

}  // namespace hamgan::metrics
