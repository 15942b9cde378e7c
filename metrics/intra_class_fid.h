// Intra-class FID (Miyato & Koyama 2018, "cGANs with projection discriminator"): FID (Heusel
// et al. 2017) between the features of class-c fakes and class-c reals, for each class c, and
// their mean. Shows a conditional model that matches the marginal but mixes up the classes.
#pragma once
#include <torch/torch.h>

#include "metrics/metric.h"

#include <string>
#include <vector>

namespace hamgan::metrics {

struct IntraClassFid {
  std::vector<double> per_class;         // NaN where a side has fewer than 2 images
  std::vector<int64_t> n_real, n_fake;   // images of each class
  double mean;                           // over the classes with a FID (NaN if none)
  std::vector<std::string> warnings;     // one per class whose FID is missing or biased
};

// real [N, d] with real_labels [N], fake [M, d] with fake_labels [M]; labels integers in
// [0, n_classes). Features any float dtype and device (statistics in float64 on the CPU).
IntraClassFid intra_class_fid(const torch::Tensor& real, const torch::Tensor& real_labels, const torch::Tensor& fake,
                              const torch::Tensor& fake_labels, int64_t n_classes);

// The registry's ifid (metrics/metric.h): the mean over the classes of both sides' labels;
// fails when a side has no classes (callers check first: never a silent gap).
MetricValue score_ifid(MetricInputs& in);

}  // namespace hamgan::metrics
