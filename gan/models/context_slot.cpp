#include "gan/models/context_slot.h"

#include "core/error.h"

namespace hamgan {

void ContextSlot::place(torch::nn::Module& owner, const ContextConfig& c,
                        const std::vector<BlockArch>& arch, CondSpec cond, double bn_eps,
                        SNOptions sn, const char* who) {
  if (c.type == "none") return;
  for (size_t i = 0; i < arch.size(); ++i) {
    if (arch[i].resolution != c.resolution) continue;
    const ContextSpec spec{arch[i].out, arch[i].resolution, arch[i].resolution, cond,
                           bn_eps, sn, c.options};
    module = owner.register_module("context", context_entry(c.type).create(spec));
    after = static_cast<int64_t>(i);
    return;
  }
  fail(who, ": no block outputs the context resolution ", c.resolution);
}

}  // namespace hamgan
