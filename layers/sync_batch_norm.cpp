#include "layers/sync_batch_norm.h"

#include "core/compat.h"
#include "core/error.h"

namespace hamgan {

void update_running_stats(torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& mean, const torch::Tensor& var,
                          const torch::Tensor& count) {
  // as BatchNormImplBase::forward, with the caller's statistics
  torch::NoGradGuard no_grad;
  double m = bn.options.momentum().value_or(0.0);
  if (bn.num_batches_tracked.defined()) {
    bn.num_batches_tracked += 1;
    // Cumulative average: only with momentum unset, which training never does (0.1) and
    // standing statistics avoid (gan/models/standing_stats.cpp gives 1 / n itself).
    // host read: only then.
    if (!bn.options.momentum()) m = 1.0 / bn.num_batches_tracked.item<double>();
  }
  const torch::Tensor unbiased = var * (count / (count - 1)).to(var.scalar_type());
  bn.running_mean.mul_(1 - m).add_(mean.to(bn.running_mean.scalar_type()), m);
  bn.running_var.mul_(1 - m).add_(unbiased.to(bn.running_var.scalar_type()), m);
}

torch::Tensor sync_batch_norm(torch::nn::BatchNorm2dImpl& bn, const torch::Tensor& x,
                              BatchReducer& reducer) {
  const auto& o = bn.options;
  if (x.dim() != 4 || x.size(1) != o.num_features())
    fail("sync_batch_norm: expected input B x ", o.num_features(), " x H x W, got ", x.sizes());
  const bool track = o.track_running_stats() && bn.running_mean.defined();
  if (!bn.is_training() && track) return bn.forward(x);  // running statistics: nothing to sync

  const int64_t c = x.size(1);
  const auto cshape = std::vector<int64_t>{1, c, 1, 1};
  // Statistics in fp32 at least (as batch_norm under autocast); the per-channel sums and
  // the element count travel in double, so the count stays exact for any global batch.
  const torch::Tensor xf = compat::is_reduced_float(x) ? x.to(torch::kFloat) : x;
  const torch::Tensor local_n =
      torch::full({1}, static_cast<double>(x.numel() / c), xf.options().dtype(torch::kDouble));
  const torch::Tensor s =
      all_reduce_sum(torch::cat({xf.sum({0, 2, 3}).to(torch::kDouble), local_n}), reducer);
  const torch::Tensor n = s.narrow(0, c, 1);
  // One value per channel over all ranks has no variance (torch's BN refuses it too). Only
  // a rank with a single local value can be in that case, so only it pays the host sync;
  // then every rank is (global count < 2 means every local count is 1) and all fail alike.
  // host read: only for a 1 x C x 1 x 1 local batch, never in a GAN's step.
  if (x.numel() / c == 1 && n.item<double>() < 2)
    fail("sync_batch_norm: expected more than 1 value per channel over all ranks when training, got input ",
         x.sizes(), " on every rank");
  const torch::Tensor mean = (s.narrow(0, 0, c) / n).to(xf.scalar_type());
  // Two passes (mean, then centred squares): E[x^2] - mean^2 cancels catastrophically in
  // fp32 when |mean| >> std. Biased variance normalises, as in BN (Ioffe & Szegedy, Alg. 1).
  const torch::Tensor xc = xf - mean.view(cshape);
  const torch::Tensor var =
      (all_reduce_sum(xc.square().sum({0, 2, 3}).to(torch::kDouble), reducer) / n)
          .to(xf.scalar_type());
  torch::Tensor y = xc * torch::rsqrt(var + o.eps()).view(cshape);
  if (o.affine()) y = y * bn.weight.view(cshape) + bn.bias.view(cshape);

  if (bn.is_training() && track) update_running_stats(bn, mean, var, n);
  return y;
}

}  // namespace hamgan
