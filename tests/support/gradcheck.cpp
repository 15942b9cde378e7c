#include "support/gradcheck.h"

#include <sstream>

namespace hamgan::test {

::testing::AssertionResult gradcheck(const std::function<torch::Tensor()>& f,
                                     std::vector<torch::Tensor> leaves, double eps, double atol,
                                     double rtol, int64_t max_elements_per_leaf) {
  for (auto& l : leaves) {
    if (l.scalar_type() != torch::kDouble || !l.requires_grad())
      return ::testing::AssertionFailure() << "gradcheck needs double leaves with requires_grad";
    if (l.grad().defined()) l.mutable_grad() = torch::Tensor();
  }
  torch::Tensor out = f();
  const torch::Tensor r = torch::randn(out.sizes(), out.options()).detach();
  (out * r).sum().backward();
  // The outputs are differenced element by element before the weighted sum: summing first
  // would cancel two large, separately rounded sums and leave round-off of ~1e-13 / eps.
  auto output = [&]() {
    torch::NoGradGuard ng;
    return f().detach();
  };
  for (size_t li = 0; li < leaves.size(); ++li) {
    torch::Tensor analytic = leaves[li].grad();
    if (!analytic.defined()) analytic = torch::zeros_like(leaves[li]);
    analytic = analytic.flatten();
    const int64_t n = leaves[li].numel();
    const int64_t step = std::max<int64_t>(1, n / max_elements_per_leaf);
    for (int64_t i = 0; i < n; i += step) {
      auto central = [&](double h) {
        torch::NoGradGuard ng;
        // Element i in logical (row-major) order, as `analytic`, whatever the leaf's strides
        // (channels-last leaves included): a 0-dim view of it.
        torch::Tensor e = leaves[li];
        for (int64_t d = 0, rest = i, size = n; d < leaves[li].dim(); ++d) {
          size /= leaves[li].size(d);
          e = e.select(0, rest / size);
          rest %= size;
        }
        const double orig = e.item<double>();
        e.fill_(orig + h);
        const torch::Tensor plus = output();
        e.fill_(orig - h);
        const torch::Tensor minus = output();
        e.fill_(orig);
        return ((plus - minus) * r).sum().item<double>() / (2 * h);
      };
      const double numeric = (4 * central(eps / 2) - central(eps)) / 3;
      const double a = analytic[i].item<double>();
      if (std::abs(a - numeric) > atol + rtol * std::abs(numeric))
        return ::testing::AssertionFailure()
               << "leaf " << li << " element " << i << ": autograd " << a << ", numeric "
               << numeric;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace hamgan::test
