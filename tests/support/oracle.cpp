#include "support/oracle.h"

#include <torch/serialize.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace hamgan::test {

namespace {
std::string env_dir(const char* var) {
  const char* v = std::getenv(var);
  if (!v) throw std::runtime_error(std::string(var) + " is not set: run the test through ctest");
  return v;
}
}  // namespace

std::string oracle_path(const std::string& file) { return env_dir("HAMGAN_ORACLE_DIR") + "/" + file; }
std::string source_path(const std::string& rel) { return env_dir("HAMGAN_SOURCE_DIR") + "/" + rel; }

TensorMap load_tensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open oracle file (did the oracle run?)");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const c10::IValue v = torch::pickle_load(bytes);
  TensorMap out;
  for (const auto& kv : v.toGenericDict())
    if (kv.value().isTensor()) out[kv.key().toStringRef()] = kv.value().toTensor();
  return out;
}

TensorMap with_prefix(const TensorMap& all, const std::string& prefix) {
  TensorMap out;
  const std::string p = prefix + ".";
  for (const auto& [k, t] : all)
    if (k.rfind(p, 0) == 0) out[k.substr(p.size())] = t;
  return out;
}

const torch::Tensor& get(const TensorMap& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) throw std::runtime_error("oracle has no tensor '" + key + "'");
  return it->second;
}

::testing::AssertionResult close(const torch::Tensor& actual, const torch::Tensor& expected,
                                 double rtol, double atol) {
  if (actual.sizes() != expected.sizes())
    return ::testing::AssertionFailure() << "shape " << actual.sizes() << " != expected "
                                         << expected.sizes();
  const auto a = actual.detach().to(torch::kCPU, torch::kDouble);
  const auto e = expected.detach().to(torch::kCPU, torch::kDouble);
  const auto excess = (a - e).abs() - (atol + rtol * e.abs());
  const auto worst = excess.flatten().argmax().item<int64_t>();
  if (excess.flatten()[worst].item<double>() <= 0 && !a.isnan().any().item<bool>())
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "element " << worst << ": got " << a.flatten()[worst].item<double>() << ", expected "
         << e.flatten()[worst].item<double>() << " (rtol " << rtol << ", atol " << atol
         << "; max abs diff " << (a - e).abs().max().item<double>() << ")";
}

}  // namespace hamgan::test
