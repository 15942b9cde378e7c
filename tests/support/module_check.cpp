#include "support/module_check.h"

namespace hamgan::test {

void expect_same_grads(torch::nn::Module& expected, torch::nn::Module& actual, double rtol,
                       double atol) {
  const auto pa = actual.named_parameters();
  for (const auto& kv : expected.named_parameters()) {
    const torch::Tensor ge = kv.value().grad(), ga = pa[kv.key()].grad();
    ASSERT_EQ(ge.defined(), ga.defined()) << kv.key();
    if (ge.defined()) {
      EXPECT_TRUE(close(ga.contiguous(), ge, rtol, atol)) << kv.key();
    }
  }
}

void expect_matches_oracle(torch::nn::Module& m, const std::string& file, const ModuleForward& fwd,
                           const std::vector<std::string>& input_keys, double rtol, double atol) {
  const TensorMap d = load_tensors(oracle_path(file));
  load_state_dict(m, with_prefix(d, "init"), file);
  std::vector<torch::Tensor> in;
  for (const auto& k : input_keys) {
    torch::Tensor t = get(d, k).clone();
    if (t.is_floating_point()) t.requires_grad_(true);
    in.push_back(t);
  }
  m.train();
  const torch::Tensor y = fwd(in);
  (y * get(d, "r")).sum().backward();
  EXPECT_TRUE(close(y, get(d, "train.y"), rtol, atol)) << file << " train output";
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].is_floating_point()) continue;
    EXPECT_TRUE(close(in[i].grad(), get(d, "train.grad_" + input_keys[i]), rtol, atol))
        << file << " grad of input " << input_keys[i];
  }
  for (const auto& kv : m.named_parameters())
    EXPECT_TRUE(close(kv.value().grad(), get(d, "train.grad." + kv.key()), rtol, atol))
        << file << " grad of " << kv.key();
  const TensorMap after = with_prefix(d, "after");
  for (const auto& kv : m.named_buffers())
    EXPECT_TRUE(close(kv.value(), get(after, kv.key()), rtol, atol)) << file << " buffer " << kv.key();
  m.eval();
  torch::NoGradGuard ng;
  for (auto& t : in) t = t.detach();
  EXPECT_TRUE(close(fwd(in), get(d, "eval.y"), rtol, atol)) << file << " eval output";
}

}  // namespace hamgan::test
