// The one base of the attention-like context modules (self_attention, kao_*, sao, stt_*):
//   y = x + gamma * branch(x),  gamma = 0 at init (each module starts as the identity),
// with the input checked here and the branch's linear maps chosen by one key:
//   projections: sagan  SAGAN's wrapping (Zhang et al. 2019, Sec. 3), so that operators are
//                       compared and not wrappers: q = W_q x, k = W_k x (C / qk_divisor),
//                       v = W_v x (C / v_divisor), out = W_o (.) back to C.
//   projections: paper  the operator's own paper: C x C maps only where the paper has them
//                       (W_V always; W_Q, W_K in KAO), X itself elsewhere, no output map.
// All maps are 1x1 SN convs without bias. A module names its maps (ProjectionNames) and
// implements branch() from query(), key(), value(), output().
#pragma once
#include <string>
#include <vector>

#include "layers/context/context.h"

namespace hamgan {

enum class Projections { sagan, paper };

struct AttentionOptions : ContextOptions {
  Projections projections = Projections::sagan;
  int64_t qk_divisor = 8;
  int64_t v_divisor = 2;
};

// Reads projections (sagan, and paper where the operator's paper form exists), qk_divisor
// (only for operators with a query or key) and v_divisor. The retired STT key `paper` fails
// with a hint to `projections`.
void parse_attention_options(ConfigNode& node, AttentionOptions& o, bool uses_query_or_key,
                             bool paper_form = true);

// A module's maps and their state-dict names (stable, so checkpoints keep loading).
// SAGAN form: q or k "" = the operator has no query / key. Paper form: paper_q or paper_k ""
// = the operator reads X itself there (the paper's Q = X or K = X).
struct ProjectionNames {
  std::string q = "theta", k = "phi", v = "g", o = "o";
  std::string paper_q, paper_k, paper_v = "wv";
};

class AttentionImpl : public ContextModuleImpl {
 public:
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& cond = {}) final;

  Projections projections() const { return projections_; }
  // Channels of the query/key and of the value as the operator sees them.
  int64_t qk_channels() const { return qk_channels_; }
  int64_t v_channels() const { return v_channels_; }

  SNConv2d q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr};  // null where the form has none
  torch::Tensor gamma;

 protected:
  // Registers the maps (q, k, v, o, in that order), then gamma; the module registers its
  // operator's own parameters after. height, width > 0: the module only takes that size.
  AttentionImpl(std::string name, int64_t channels, SNOptions sn, const AttentionOptions& opt,
                const ProjectionNames& names, int64_t height = 0, int64_t width = 0);

  // The residual branch on a checked B x C x H x W input, before gamma.
  virtual torch::Tensor branch(const torch::Tensor& x) = 0;

  // The form's maps on any B x C x ... map; X itself where the form has no map.
  torch::Tensor query(const torch::Tensor& t) { return q ? q->forward(t) : t; }
  torch::Tensor key(const torch::Tensor& t) { return k ? k->forward(t) : t; }
  torch::Tensor value(const torch::Tensor& t) { return v->forward(t); }
  torch::Tensor output(const torch::Tensor& t) { return o ? o->forward(t) : t; }

  // query, key, value of x flattened to B x channels x N (N = H*W). When both query and key
  // are X itself, k is the same tensor as q, so operators compute shared terms once.
  struct Qkv {
    torch::Tensor q, k, v;
  };
  Qkv project_flat(const torch::Tensor& x);

  std::string name_;
  int64_t channels_, height_, width_;

 private:
  Projections projections_;
  int64_t qk_channels_ = 0, v_channels_ = 0;
};

}  // namespace hamgan
