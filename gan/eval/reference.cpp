#include "gan/eval/reference.h"

#include <algorithm>
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

std::vector<std::string> chosen_images(const std::string& dir, int64_t n, bool at_most, uint64_t seed,
                                       std::string* described) {
  const std::vector<std::string> files = list_images(dir);
  const auto count = static_cast<int64_t>(files.size());
  if (n > count && !at_most) fail("-n ", n, ": ", dir, " holds only ", count, " images");
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

metrics::Features data_features(const std::string& path, const ReferenceOptions& opt,
                                const metrics::FeatureNet& net, bool want_logits, std::string* described) {
  DataConfig dc;
  dc.path = path;
  dc.format = resolve_format(opt.format, path);
  const int64_t channels = opt.channels > 0 ? opt.channels : (dc.format == DataFormat::Fmnist ? 1 : 3);
  auto data = open_dataset(dc, opt.resolution, channels);
  const int64_t n = opt.at_most ? std::min(opt.n, data->size()) : opt.n;
  if (n > data->size()) fail("-n ", n, ": ", path, " has only ", data->size(), " images");
  Subset subset = choose_subset(*data, n, opt.subset_seed);
  if (n > 0 && n < data->size()) std::cerr << path << ": " << subset.description << "\n";
  if (described) *described = subset.description;
  auto labels = std::make_shared<std::vector<int64_t>>();
  auto skipped = std::make_shared<int64_t>(0);
  metrics::Features f = metrics::extract_features(
      net, dataset_batches(data, std::move(subset.indices), net, opt.batch, opt.workers, labels, skipped),
      want_logits);
  f.labels = torch::tensor(*labels, torch::kLong);
  if (*skipped > 0)
    std::cerr << "warning: " << path << ": " << *skipped << " of " << (n > 0 ? n : data->size())
              << " images could not be decoded and are left out (" << f.pool.size(0) << " images in the statistics)\n";
  return f;
}

Reference load_reference(const std::string& real, const ReferenceOptions& opt, const metrics::FeatureNet& net) {
  Reference r;
  if (is_npz(real)) {
    r.stats = metrics::load_stats(real);
    metrics::check_same_net(r.stats, net.identity(), real);
    if (!r.stats.images.empty()) std::cerr << real << ": statistics of " << r.stats.images << "\n";
    r.no_kid_why = "KID, precision/recall, density/coverage and intra-class FID need real image features; --real " +
                   real + " holds only statistics (pass a directory or data source)";
    return r;
  }
  // An image directory unless it is (or is asked to be read as) a non-folder data source.
  if (opt.format == DataFormat::Auto && detect_format(real) == DataFormat::Folder) {
    const auto files = chosen_images(real, opt.n, opt.at_most, opt.subset_seed);
    r.pool = metrics::extract_features(net, metrics::image_batches(files, net, opt.batch, opt.workers), false).pool;
    r.labels = folder_labels(real, files);
  } else {
    const metrics::Features f = data_features(real, opt, net);
    r.pool = f.pool, r.labels = f.labels;
  }
  r.stats = metrics::compute_stats(r.pool);
  r.stats.net = net.identity();
  return r;
}

}  // namespace hamgan::eval
