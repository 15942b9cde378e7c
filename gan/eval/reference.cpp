#include "gan/eval/reference.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "core/error.h"
#include "gan/data/sources.h"
#include "gan/data/subset.h"
#include "gan/eval/dataset_batches.h"
#include "io/decode.h"
#include "metrics/image_dir.h"
#include "metrics/inception.h"

namespace hamgan::eval {

bool is_npz(const std::string& path) { return path.size() > 4 && path.substr(path.size() - 4) == ".npz"; }

namespace {

// 3 when one of up to 8 of `files` (spread over the list, so over the classes) is in colour, 1
// when all of them are gray; 0 when none decodes. A gray picture stored as RGB (JPEG chroma
// rounding included) counts as gray: colour is a mean channel difference above 2 levels.
int64_t channels_of(const std::vector<std::string>& files) {
  if (files.empty()) return 0;
  const size_t looks = std::min<size_t>(8, files.size());
  int64_t seen = 0;
  for (size_t j = 0; j < looks; ++j) {
    Image im;
    std::string why;
    if (!decode_image(files[j * files.size() / looks], 64, /*gray_ok=*/true, im, why)) continue;
    ++seen;
    if (im.channels != 3) continue;
    double diff = 0;
    const size_t px = im.pixels.size() / 3;
    for (size_t i = 0; i < px; ++i) {
      const int r = im.pixels[3 * i], g = im.pixels[3 * i + 1], b = im.pixels[3 * i + 2];
      diff += std::abs(r - g) + std::abs(g - b);
    }
    if (px > 0 && diff / static_cast<double>(px) > 2.0) return 3;
  }
  return seen > 0 ? 1 : 0;
}

int64_t classes_of(const torch::Tensor& labels) {
  return labels.defined() && labels.numel() > 0 ? labels.max().item<int64_t>() + 1 : 0;
}

}  // namespace

std::vector<std::string> chosen_images(const std::string& dir, int64_t n, bool at_most, uint64_t seed,
                                       std::string* described, const std::string& n_key) {
  const std::vector<std::string> files = list_images(dir);
  const auto count = static_cast<int64_t>(files.size());
  if (n > count && !at_most) fail(n_key, " ", n, ": ", dir, " holds only ", count, " images");
  const torch::Tensor classes = folder_labels(dir, files);
  std::vector<int64_t> class_of(static_cast<size_t>(count), Dataset::kLabelUnknown);
  if (classes.defined()) std::copy_n(classes.contiguous().data_ptr<int64_t>(), count, class_of.begin());
  const Subset s =
      choose_subset(count, [&](int64_t i) { return static_cast<int32_t>(class_of[static_cast<size_t>(i)]); }, n, seed);
  if (n > 0 && n < count) std::cerr << dir << ": " << s.description << "\n";
  if (described) *described = s.description;
  std::vector<std::string> out;
  for (const int64_t i : s.indices) out.push_back(files[static_cast<size_t>(i)]);
  return out;
}

int64_t source_channels(const ReferenceOptions& opt, DataFormat format) {
  return opt.channels > 0 ? opt.channels : default_channels(format);
}

metrics::Features dataset_features(std::shared_ptr<Dataset> data, const std::string& name, const ReferenceOptions& opt,
                                   const metrics::FeatureNet& net, bool want_logits, std::string* described) {
  const int64_t n = opt.at_most ? std::min(opt.n, data->size()) : opt.n;
  if (n > data->size()) fail(opt.n_key, " ", n, ": ", name, " has only ", data->size(), " images");
  Subset subset = choose_subset(*data, n, opt.subset_seed);
  if (n > 0 && n < data->size()) std::cerr << name << ": " << subset.description << "\n";
  if (described) *described = subset.description;
  auto labels = std::make_shared<std::vector<int64_t>>();
  auto skipped = std::make_shared<int64_t>(0);
  const int64_t size = data->size();
  metrics::Features f = metrics::extract_features(
      net, dataset_batches(std::move(data), std::move(subset.indices), net, opt.batch, opt.workers, labels, skipped),
      want_logits);
  f.labels = torch::tensor(*labels, torch::kLong);
  if (*skipped > 0)
    std::cerr << "warning: " << name << ": " << *skipped << " of " << (n > 0 ? n : size)
              << " images could not be decoded and are left out (" << f.pool.size(0) << " images in the statistics)\n";
  return f;
}

metrics::Features data_features(const std::string& path, const ReferenceOptions& opt,
                                const metrics::FeatureNet& net, bool want_logits, std::string* described,
                                int64_t* n_classes) {
  DataConfig dc;
  dc.path = path;
  dc.format = resolve_format(opt.format, path);
  auto data = open_dataset(dc, opt.resolution, source_channels(opt, dc.format));
  if (n_classes) *n_classes = data->num_classes();
  return dataset_features(std::move(data), path, opt, net, want_logits, described);
}

Reference load_reference(const std::string& real, const ReferenceOptions& opt, const metrics::FeatureNet& net) {
  Reference r;
  r.name = real;
  if (is_npz(real)) {
    r.stats = metrics::load_stats(real);
    metrics::check_same_net(r.stats, net.identity(), real);
    if (!r.stats.images.empty()) std::cerr << real << ": statistics of " << r.stats.images << "\n";
    r.no_kid_why = "the metrics that compare real and fake image features need the real ones; --real " +
                   real + " holds only statistics (pass a directory or data source)";
    return r;
  }
  // An image directory unless it is (or is asked to be read as) a non-folder data source.
  if (opt.format == DataFormat::Auto && detect_format(real) == DataFormat::Folder) {
    const auto files = chosen_images(real, opt.n, opt.at_most, opt.subset_seed, nullptr, opt.n_key);
    r.pool = metrics::extract_features(net, metrics::image_batches(files, net, opt.batch, opt.workers), false).pool;
    r.labels = folder_labels(real, files);
    r.n_classes = classes_of(r.labels);
    r.channels = channels_of(files);
  } else {
    const metrics::Features f = data_features(real, opt, net, false, nullptr, &r.n_classes);
    r.pool = f.pool, r.labels = f.labels;
    // The source's own channels: a data source is read converted to opt.channels.
    switch (resolve_format(opt.format, real)) {
      case DataFormat::Fmnist: r.channels = 1; break;
      case DataFormat::Cifar10: r.channels = 3; break;
      case DataFormat::Folder: r.channels = channels_of(list_images(real)); break;
      default: break;  // a packed file opens only at the channels asked for
    }
  }
  r.stats = metrics::compute_stats(r.pool);
  r.stats.net = net.identity();
  return r;
}

void check_reference_fits(const Reference& ref, int64_t n_classes, int64_t channels, const std::string& key) {
  const std::string what = key + " " + ref.name;
  if (ref.n_classes > 0 && ref.n_classes != n_classes)
    fail(what, ": images of ", ref.n_classes, " classes, and the GAN draws ", n_classes,
         " (model.n_classes): scores against it would compare other classes than the GAN's (intra-class FID "
         "class by class). Give a reference of the GAN's classes");
  if (ref.channels > 0 && ref.channels != channels)
    fail(what, ": ", ref.channels == 3 ? "colour" : "gray", " images, and the GAN draws ",
         channels == 3 ? "colour" : "gray", " ones (model.image_channels ", channels,
         "): scores against it would measure the colour, not the GAN. Give a reference with the GAN's channels");
}

}  // namespace hamgan::eval
