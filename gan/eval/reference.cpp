#include "gan/eval/reference.h"

#include <algorithm>
#include <iostream>

#include "core/error.h"
#include "gan/data/sources.h"
#include "gan/eval/dataset_batches.h"
#include "io/decode.h"
#include "metrics/image_dir.h"
#include "metrics/inception.h"

namespace hamgan::eval {

bool is_npz(const std::string& path) { return path.size() > 4 && path.substr(path.size() - 4) == ".npz"; }

metrics::Features data_features(const std::string& path, const ReferenceOptions& opt,
                                const metrics::FeatureNet& net, bool want_logits) {
  DataConfig dc;
  dc.path = path;
  dc.format = opt.format.empty() ? detect_format(path) : opt.format;
  const int64_t channels = opt.channels > 0 ? opt.channels : (dc.format == "fmnist" ? 1 : 3);
  auto data = open_dataset(dc, opt.resolution, channels);
  const int64_t n = opt.at_most ? std::min(opt.n, data->size()) : opt.n;
  auto labels = std::make_shared<std::vector<int64_t>>();
  auto skipped = std::make_shared<int64_t>(0);
  metrics::Features f = metrics::extract_features(
      net, dataset_batches(data, n, net, opt.batch, opt.workers, labels, skipped), want_logits);
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
    r.no_kid_why = "KID needs real image features; --real " + real + " holds only statistics (pass a directory or data source)";
    return r;
  }
  // An image directory unless it is (or is asked to be read as) a non-folder data source.
  const std::string f = opt.format.empty() ? detect_format(real) : opt.format;
  if (f == "folder" && opt.format.empty()) {
    auto files = list_images(real, opt.at_most ? 0 : opt.n);
    if (opt.at_most && opt.n > 0 && static_cast<int64_t>(files.size()) > opt.n) files.resize(static_cast<size_t>(opt.n));
    r.pool = metrics::extract_features(net, metrics::image_batches(files, net, opt.batch, opt.workers), false).pool;
  } else {
    r.pool = data_features(real, opt, net).pool;
  }
  r.stats = metrics::compute_stats(r.pool);
  r.stats.net = net.identity();
  return r;
}

}  // namespace hamgan::eval
