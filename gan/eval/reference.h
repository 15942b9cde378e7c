// The real side of FID/KID: reference statistics from a pytorch-fid .npz, or features of an
// image directory or of a data source (then KID is possible too).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gan/config/config.h"
#include "gan/data/dataset.h"
#include "metrics/extract.h"
#include "metrics/statistics.h"

namespace hamgan::eval {

struct ReferenceOptions {
  DataFormat format = DataFormat::Auto;  // data source format (Auto: detected from the path)
  int64_t n = 0;        // n real images (0 = all): a class-balanced subset of a data source
  std::string n_key = "-n";  // the flag or config key that set n, for errors
  uint64_t subset_seed = 0;  // which subset (the same by default, so statistics compare)
  bool at_most = false; // n is an upper bound: fewer images are fine (else an error)
  int64_t resolution = 32, channels = 0;  // data sources are read at this size (channels 0: 1 for fmnist, else 3)
  int64_t batch = 50;
  int workers = 4;
};

struct Reference {
  metrics::GaussianStats stats;
  torch::Tensor pool;      // [N, dim] real features; undefined for an .npz
  torch::Tensor labels;    // [N] their classes when known (data sources, class directories)
  std::string no_kid_why;  // set when pool is undefined
  std::string name;        // the path it came from, for messages
  // What the images are, where it can be told (0: unknown, as for an .npz or a flat folder):
  // the source's classes, and 1 (every image looked at is gray) or 3 (some are in colour).
  int64_t n_classes = 0, channels = 0;
};

bool is_npz(const std::string& path);
// `real`: file.npz (its feature network must be `net`), an image directory (ImageFolder or
// flat), or a data source directory/file.
Reference load_reference(const std::string& real, const ReferenceOptions& opt, const metrics::FeatureNet& net);
// Error naming `key` (the flag or config key that chose the reference) unless the reference's
// images can be what a GAN of `n_classes` classes and `channels` channels draws: the same number
// of classes where the reference has classes, gray images for a gray GAN and colour ones for a
// colour GAN where that can be told. Scores against other images compare other things.
void check_reference_fits(const Reference& ref, int64_t n_classes, int64_t channels, const std::string& key);
// Features (and labels; logits when asked) of a data source (`hamgan fid stats --data`).
// The image files under `dir`, n of them (0: all; more than there are: an error unless
// `at_most`) class-balanced over its class subdirectories, else uniformly, from `seed`;
// the choice is printed and described in `described`.
std::vector<std::string> chosen_images(const std::string& dir, int64_t n, bool at_most, uint64_t seed,
                                       std::string* described = nullptr,
                                       const std::string& n_key = "-n");
// The channels a data source of `format` is read at: opt.channels, else 1 for Fashion-MNIST and
// 3 for the rest.
int64_t source_channels(const ReferenceOptions& opt, DataFormat format);
// The features of an opened data set as data_features reads a source's (`name` in messages):
// opt.n of its images (0: all; more is an error unless opt.at_most), class-balanced from
// opt.subset_seed, with their labels.
metrics::Features dataset_features(std::shared_ptr<Dataset> data, const std::string& name, const ReferenceOptions& opt,
                                   const metrics::FeatureNet& net, bool want_logits = false,
                                   std::string* described = nullptr);
// With -n below the source's size the images are a class-balanced subset (gan/data/subset.h),
// printed and described in `described`.
// `n_classes` (when given) gets the source's number of classes.
metrics::Features data_features(const std::string& path, const ReferenceOptions& opt,
                                const metrics::FeatureNet& net, bool want_logits = false,
                                std::string* described = nullptr, int64_t* n_classes = nullptr);

}  // namespace hamgan::eval
