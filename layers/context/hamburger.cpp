#include "layers/context/hamburger.h"

#include <ATen/CPUGeneratorImpl.h>

#include "core/compat.h"
#include "core/device.h"
#include "core/error.h"

namespace hamgan {

HamburgerImpl::HamburgerImpl(const ContextSpec& spec)
    : opt_(context_options<HamburgerOptions>(spec)) {
  const std::string& name = opt_.ham->name();
  const int64_t c = spec.channels;
  d_ = opt_.d > 0 ? opt_.d : c;
  r_ = opt_.r > 0 ? opt_.r : d_ / 8;
  if (r_ < 1) fail(name, ": r = d/8 is 0 for d = ", d_, "; set r explicitly");
  if (opt_.seed >= 0) gen_ = at::make_generator<at::CPUGeneratorImpl>(opt_.seed);
  lower = register_module("lower", SNConv2d(c, opt_.groups * d_, 1, 0, false, spec.sn));
  upper = register_module("upper", SNConv2d(opt_.groups * d_, c, 1, 0, false, spec.sn));
  if (spec.cond.kind != CondKind::none)
    norm = register_module("norm", CondBatchNorm2d(c, spec.cond, spec.bn_eps, spec.sn));
  sigma = register_parameter("sigma", torch::zeros({}));
  if (opt_.init != HamInit::random)
    bases = register_buffer("bases", opt_.ham->random_bases(opt_.groups, d_, r_, gen_, {}));
}

void HamburgerImpl::set_next_bases(torch::Tensor b) { next_bases_ = std::move(b); }

void HamburgerImpl::reseed(uint64_t seed) {
  gen_ = at::make_generator<at::CPUGeneratorImpl>(seed);
}

torch::Tensor HamburgerImpl::initial_bases(int64_t batch, const torch::TensorOptions& options) {
  const int64_t rows = batch * opt_.groups;
  torch::Tensor b;
  if (next_bases_.defined()) {
    b = std::move(next_bases_);
    next_bases_ = torch::Tensor();
    if (b.dim() != 3 || b.size(0) != rows || b.size(1) != d_ || b.size(2) != r_)
      fail(opt_.ham->name(), ": set_next_bases got ", b.sizes(), ", expected [", rows, ", ", d_,
           ", ", r_, "] (batch * groups, d, r)");
  } else if (opt_.init == HamInit::random) {
    b = gen_ ? opt_.ham->random_bases(rows, d_, r_, gen_, options.device(torch::kCPU))
             : opt_.ham->random_bases(rows, d_, r_, c10::nullopt, options);
  } else {
    b = bases.repeat({batch, 1, 1});
  }
  // Seeded bases come from the CPU generator: queued to a GPU without waiting for it.
  if (b.is_cpu()) return host_to_device(b, options);
  return b.to(options);
}

torch::Tensor HamburgerImpl::forward(const torch::Tensor& x, const torch::Tensor& cond) {
  if (x.dim() != 4 || x.size(1) != lower->weight_orig.size(1))
    fail(opt_.ham->name(), ": expected input B x ", lower->weight_orig.size(1), " x H x W, got ",
         x.sizes());
  const int64_t b = x.size(0), h = x.size(2), w = x.size(3), s = opt_.groups;
  const torch::Tensor hid = lower->forward(x);
  torch::Tensor coef, wd;
  {
    compat::NoAutocast fp32;
    const torch::Tensor raw = hid.reshape({b * s, d_, h * w});
    const auto dtype = compat::is_reduced_float(raw) ? torch::kFloat : raw.scalar_type();
    const torch::Tensor bases0 = initial_bases(b, raw.options().dtype(dtype));
    const int64_t steps = is_training() || opt_.eval_steps == 0 ? opt_.steps : opt_.eval_steps;
    const Decomposed m = opt_.grad == HamGrad::one_step
                             ? opt_.ham->solve_one_step(raw, bases0, steps)
                             : solve(*opt_.ham, opt_.ham->prepare(raw).to(dtype), bases0, steps, opt_.grad);
    if (opt_.init == HamInit::online && is_training()) {
      torch::NoGradGuard ng;
      const torch::Tensor mean = m.bases.detach().reshape({b, s, d_, r_}).mean(0).to(bases.dtype());
      bases.copy_(normalize_columns(bases + opt_.momentum * (mean - bases)));
    }
    // W_u (D C) = (W_u D) C: the upper bread folded into the r columns of D costs C*S*d*r +
    // C*S*r*n MACs per image instead of S*d*r*n + C*S*d*n (r = d/8: ~8x fewer), same values.
    const int64_t c = upper->weight_orig.size(0);
    const torch::Tensor wu = upper->weight().view({1, c, s, d_}).permute({0, 2, 1, 3});  // 1 S C d
    wd = torch::matmul(wu.to(dtype), m.bases.reshape({b, s, d_, r_}))                   // b S C r
             .permute({0, 2, 1, 3})
             .reshape({b, c, s * r_});
    coef = m.coef.reshape({b, s * r_, h * w});
  }
  // Without N, sigma scales the small W_u D instead of the output: one pass less over
  // B x C x H x W forward and backward.
  if (!norm) wd = sigma * wd;
  // The output in x's memory format: channels-last x gets (C^T (W_u D)^T)^T, no layout change
  // in the residual sum.
  torch::Tensor out;
  if (!x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast))
    out = torch::bmm(coef.transpose(1, 2), wd.transpose(1, 2)).view({b, h, w, -1}).permute({0, 3, 1, 2});
  else
    out = torch::bmm(wd, coef).view({b, -1, h, w});
  out = out.to(x.scalar_type());
  if (norm) out = sigma * norm->forward(out, cond);
  return x + out;
}

std::shared_ptr<const ContextOptions> parse_hamburger_options(
    ConfigNode& node, std::shared_ptr<const Decomposition> (*parse_ham)(ConfigNode&)) {
  using H = HamburgerOptions;
  static const KeyTable<H> table(OnResume::Model, {
      keys::integer("groups", &H::groups, 1, 1024, "S: the lower bread maps C to S x d channels, decomposed per group"),
      keys::integer("d", &H::d, 0, 65536, "the decomposed matrix's rows; 0: the input channels C"),
      keys::integer("r", &H::r, 0, 65536, "bases (rank); 0: d / 8 (Sec. 3.1: d = 8r)"),
      keys::integer("steps", &H::steps, 1, 1000, "K, iterations of the decomposition in training"),
      keys::integer("eval_steps", &H::eval_steps, 0, 1000, "K in eval mode; 0: as `steps`"),
      keys::word("grad", &H::grad, Words<HamGrad>{{HamGrad::one_step, "one_step"}, {HamGrad::bptt, "bptt"}},
                 "gradient through the decomposition: the paper's one-step gradient, or back-propagation through all K steps"),
      keys::word("init", &H::init,
                 Words<HamInit>{{HamInit::random, "random"}, {HamInit::fixed, "fixed"}, {HamInit::online, "online"}},
                 "the initial bases: drawn afresh every forward, drawn once and kept, or kept and moved towards each "
                 "batch's solved bases"),
      keys::real("momentum", &H::momentum, closed(0, 1), "`init: online`: weight of the new batch mean in the update"),
      keys::integer("seed", &H::seed, -1, "-1: bases from the global RNG; >= 0: from a private generator with this seed"),
  });
  auto o = std::make_shared<HamburgerOptions>();
  table.read(node, *o);
  o->ham = parse_ham(node);
  return o;
}

ContextModule make_hamburger(const ContextSpec& spec) {
  return std::make_shared<HamburgerImpl>(spec);
}

}  // namespace hamgan
