#include "layers/minibatch_std.h"

#include "core/error.h"

namespace hamgan {

namespace {

// s of Karras et al.'s equation for n images in groups of g consecutive ones (n % g == 0):
// n x F x H x W, in fp32 for bf16 and fp16 inputs.
torch::Tensor group_std(const torch::Tensor& x, int64_t g, int64_t features) {
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const bool reduced = x.scalar_type() == torch::kBFloat16 || x.scalar_type() == torch::kHalf;
  torch::Tensor y = (reduced ? x.to(torch::kFloat) : x).reshape({n / g, g, features, c / features, h, w});
  y = y - y.mean(1, /*keepdim=*/true);
  y = (y.square().mean(1) + 1e-8).sqrt();  // the group's standard deviation: n/g x F x C/F x H x W
  y = y.mean({2, 3, 4});                    // n/g x F
  return y.reshape({n / g, 1, features, 1, 1}).expand({n / g, g, features, h, w}).reshape({n, features, h, w});
}

}  // namespace

torch::Tensor minibatch_std(const torch::Tensor& x, int64_t group, int64_t features) {
  if (x.dim() != 4) fail("minibatch_std: expected N x C x H x W, got ", x.sizes());
  if (group < 1 || features < 1 || x.size(1) % features != 0)
    fail("minibatch_std: group ", group, " and features ", features, ": expected both >= 1 and ", x.size(1),
         " channels a multiple of features");
  const int64_t n = x.size(0), g = std::min(group, n), full = n - n % g;
  torch::Tensor s = group_std(x.narrow(0, 0, full), g, features);
  if (full < n) s = torch::cat({s, group_std(x.narrow(0, full, n - full), n - full, features)});
  return torch::cat({x, s.to(x.scalar_type())}, 1);
}

}  // namespace hamgan
