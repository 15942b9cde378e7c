// Where a network's context module sits: after the first block whose output has the
// configured feature resolution (SAGAN/BigGAN place attention the same way).
#pragma once
#include <torch/torch.h>

#include <vector>

#include "gan/config/arch.h"
#include "layers/context/context.h"

namespace hamgan {

struct ContextSlot {
  ContextModule module;  // null for type none
  int64_t after = -1;    // block index it follows

  // Builds the module and registers it on `owner` as "context"; `who` names the network
  // in errors.
  void place(torch::nn::Module& owner, const ContextConfig& c, const std::vector<BlockArch>& arch,
             CondSpec cond, double bn_eps, SNOptions sn, const char* who);
};

}  // namespace hamgan
