#include "gan/train/init_from.h"

#include <map>
#include <set>
#include <sstream>

#include "core/compat.h"
#include "core/error.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/train/trainer.h"

namespace hamgan {

namespace {

std::string shape(const torch::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

// Shapes that differ only where the checkpoint has `from` classes and this model `to`.
bool class_count_only(const torch::Tensor& src, const torch::Tensor& dst, int64_t from, int64_t to) {
  if (from == to || src.dim() != dst.dim()) return false;
  bool differs = false;
  for (int64_t i = 0; i < src.dim(); ++i) {
    if (src.size(i) == dst.size(i)) continue;
    if (src.size(i) != from || dst.size(i) != to) return false;
    differs = true;
  }
  return differs;
}

std::map<std::string, torch::Tensor> tensors(const torch::nn::Module& m) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& kv : m.named_parameters()) out[kv.key()] = kv.value();
  for (const auto& kv : m.named_buffers()) out[kv.key()] = kv.value();
  return out;
}

struct Copy {
  int64_t from_classes, to_classes;
  std::vector<std::string> reinitialised, misfits;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> params;  // (checkpoint's, this run's) copied
};

// src's tensors into dst, by name; `part` prefixes the names reported.
void copy_module(const std::string& part, const torch::nn::Module& src, torch::nn::Module& dst, Copy& c) {
  torch::NoGradGuard no_grad;
  const auto from = tensors(src);
  const auto to = tensors(dst);
  std::set<const c10::TensorImpl*> src_params;
  for (const auto& p : src.parameters()) src_params.insert(p.unsafeGetTensorImpl());
  for (const auto& [name, t] : to) {
    const auto it = from.find(name);
    if (it == from.end()) {
      c.misfits.push_back(part + "." + name + ": not in the checkpoint");
      continue;
    }
    const torch::Tensor& s = it->second;
    if (s.sizes() == t.sizes()) {
      torch::Tensor d = t;
      d.copy_(s);
      if (src_params.count(s.unsafeGetTensorImpl())) c.params.emplace_back(s, t);
    } else if (class_count_only(s, t, c.from_classes, c.to_classes)) {
      c.reinitialised.push_back(part + "." + name);
    } else {
      c.misfits.push_back(part + "." + name + ": checkpoint " + shape(s) + ", this model " + shape(t));
    }
  }
  for (const auto& kv : from)
    if (!to.count(kv.first)) c.misfits.push_back(part + "." + kv.first + ": not in this model");
}

// Adam's per-parameter state (step, moments) of each copied parameter that `dst` updates.
void copy_moments(torch::optim::Adam& src, torch::optim::Adam& dst,
                  const std::vector<std::pair<torch::Tensor, torch::Tensor>>& params) {
  std::set<const c10::TensorImpl*> updated;
  for (const auto& g : dst.param_groups())
    for (const auto& p : g.params()) updated.insert(p.unsafeGetTensorImpl());
  for (const auto& [s, d] : params) {
    const torch::optim::AdamParamState* st = compat::adam_state(src, s);
    if (!st || !updated.count(d.unsafeGetTensorImpl())) continue;
    auto like = [&d](const torch::Tensor& x) {
      return x.defined() ? torch::empty_like(d, torch::MemoryFormat::Preserve).copy_(x) : x;
    };
    auto n = std::make_unique<torch::optim::AdamParamState>();
    n->step(st->step());
    n->exp_avg(like(st->exp_avg()));
    n->exp_avg_sq(like(st->exp_avg_sq()));
    if (st->max_exp_avg_sq().defined()) n->max_exp_avg_sq(like(st->max_exp_avg_sq()));
    compat::set_adam_state(dst, d, std::move(n));
  }
}

}  // namespace

std::vector<std::string> init_from_checkpoint(Trainer& t, const CheckpointData& c, bool optimizer) {
  const Config& from = c.config;
  // Tensors that match by name and shape do not make the same model: a context module of
  // another type (ham_nmf into ham_vq, self_attention into kao_kv) can share them all.
  std::vector<std::string> keys;
  for (const auto& d : model_differences(from, t.config()))
    if (d.rfind("  model.n_classes:", 0) != 0) keys.push_back(d);
  Copy copy{from.model.n_classes, t.config().model.n_classes, {}, {}, {}};
  Generator g(from.model, from.generator);
  c.load_module("g", *g);
  copy_module("g", *g, *t.g(), copy);
  const auto g_params = copy.params;
  copy.params.clear();
  Discriminator d(from.model, from.discriminator);
  c.load_module("d", *d);
  copy_module("d", *d, *t.d(), copy);
  const auto d_params = copy.params;
  if (Generator* ema = t.g_ema()) {
    Generator src = g;
    if (c.has_ema) {
      src = Generator(from.model, from.generator);
      c.load_module("g_ema", *src);
    }
    Copy ema_copy{copy.from_classes, copy.to_classes, {}, {}, {}};
    copy_module("g_ema", *src, **ema, ema_copy);
    copy.reinitialised.insert(copy.reinitialised.end(), ema_copy.reinitialised.begin(), ema_copy.reinitialised.end());
    copy.misfits.insert(copy.misfits.end(), ema_copy.misfits.begin(), ema_copy.misfits.end());
  }
  if (!keys.empty() || !copy.misfits.empty()) {
    std::string lines;
    if (!keys.empty()) {
      lines += "\nthe model this config builds differs from the checkpoint's in " + std::to_string(keys.size()) +
               (keys.size() == 1 ? " key:" : " keys:");
      for (const auto& k : keys) lines += "\n" + k;
    }
    if (!copy.misfits.empty()) {
      const size_t n = copy.misfits.size();
      lines += "\n" + std::to_string(n) + (n == 1 ? " tensor does" : " tensors do") + " not fit it:";
      for (const auto& m : copy.misfits) lines += "\n  " + m;
    }
    fail(c.path, " (train.init_from): only model.n_classes may differ from the checkpoint's model (compare its "
         "model, generator and discriminator settings with `hamgan info`; set those keys as the checkpoint has them):",
         lines);
  }
  if (optimizer) {
    // Optimizers built as the checkpoint's run built them (D's without its frozen blocks).
    const auto adam = [](std::vector<torch::Tensor> p) {
      return torch::optim::Adam(std::move(p), torch::optim::AdamOptions(1e-4));
    };
    torch::optim::Adam og = adam(g->parameters());
    c.load_optimizer("opt_g", og);
    copy_moments(og, t.opt_g(), g_params);
    d->freeze_blocks(from.train.freeze_d);
    torch::optim::Adam od = adam(d->trainable_parameters());
    c.load_optimizer("opt_d", od);
    copy_moments(od, t.opt_d(), d_params);
  }
  return copy.reinitialised;
}

void log_init_from(std::ostream& out, const CheckpointData& c, int64_t n_classes,
                   const std::vector<std::string>& reinitialised, bool optimizer) {
  out << "fine-tuning from " << c.path << " (iteration " << c.iteration << " of its run, "
      << c.config.model.n_classes << " classes): G, D" << (c.has_ema ? ", EMA G" : "")
      << (optimizer ? " and Adam's moments" : "") << " copied; this run starts at iteration 0\n";
  if (!c.has_ema) out << "  the checkpoint has no EMA G: the EMA G starts from its G\n";
  for (const auto& name : reinitialised)
    out << "  re-initialised for model.n_classes " << n_classes << " (checkpoint: " << c.config.model.n_classes
        << "): " << name << "\n";
}

}  // namespace hamgan
