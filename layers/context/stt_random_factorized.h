// Tensor Random Factorized Synthesizer (STT paper Sec. 3.3, Eq. 21):
//   R = R_1 (x) R_2 (x) ... (x) R_N,  R_i in R^{rows[i] x cols[i]},  Y = Softmax(R) V,
// with prod(rows) = prod(cols) = HW. Default rows = cols = [H, W]: R = R_H (x) R_W, a
// separable row/column alignment with H^2 + W^2 parameters.
#pragma once
#include "layers/context/stt_attention.h"

namespace hamgan {

struct SttRandomFactorizedOptions : SttCommonOptions {
  bool learned = true;
  double init_std = 1.0;
  std::vector<int64_t> rows;  // empty: [H, W]
  std::vector<int64_t> cols;  // empty: [H, W]
};

// Reads learned, init_std, rows, cols into o (shared with stt_mixture).
void parse_stt_kron_keys(ConfigNode& node, SttRandomFactorizedOptions& o);
// Resolved (rows, cols) for an H x W map, failing naming the key on a bad shape.
std::pair<std::vector<int64_t>, std::vector<int64_t>> stt_kron_shape(
    const SttRandomFactorizedOptions& o, int64_t h, int64_t w);

class SttRandomFactorizedImpl : public SttAttentionImpl {
 public:
  SttRandomFactorizedImpl(const ContextSpec& spec, const SttRandomFactorizedOptions& opt);
  std::vector<torch::Tensor> factors;  // r_0 .. r_{N-1}

 protected:
  torch::Tensor logits(const torch::Tensor& query) override;
};

std::shared_ptr<const ContextOptions> parse_stt_random_factorized_options(ConfigNode& node);
ContextModule make_stt_random_factorized(const ContextSpec& spec);

}  // namespace hamgan
