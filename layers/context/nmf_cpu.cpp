#include "layers/context/nmf_cpu.h"

#include <ATen/Parallel.h>

#include "core/error.h"

namespace hamgan {

namespace {

void check_shapes(const char* who, const torch::Tensor& x, const torch::Tensor& bases,
                  const torch::Tensor& coef) {
  const bool ok = x.dim() == 3 && bases.dim() == 3 && bases.size(0) == x.size(0) &&
                  bases.size(1) == x.size(1) && x.device().is_cpu() && bases.device().is_cpu() &&
                  (!coef.defined() || (coef.dim() == 3 && coef.size(0) == x.size(0) &&
                                       coef.size(1) == bases.size(2) && coef.size(2) == x.size(2)));
  if (!ok)
    fail(who, ": expected CPU tensors X (N x d x n), D (N x d x r), C (N x r x n); got X ",
         x.sizes(), ", D ", bases.sizes(), ", C ", coef.defined() ? coef.sizes() : at::IntArrayRef{});
}

// A d x n buffer in `dtype` with x_b's strides: channels-last input (x_b = X_b^T in memory)
// loads with a contiguous conversion, and BLAS takes the transposed operand as it is.
torch::Tensor scratch_like(const torch::Tensor& x, const torch::TensorOptions& dtype) {
  return torch::empty_like(x[0], dtype);
}

// X_b = x_b (ReLU'd) in the scratch's dtype.
void load(torch::Tensor& scratch, const torch::Tensor& xb, bool relu) {
  scratch.copy_(xb);
  if (relu) scratch.clamp_min_(0);
}

class NmfFinalUpdate : public torch::autograd::Function<NmfFinalUpdate> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& bases, const torch::Tensor& coef, double eps) {
    const torch::Tensor d = bases.detach().contiguous(), c = coef.detach().contiguous();
    const int64_t n_items = x.size(0), r = d.size(2), n = x.size(2);
    torch::Tensor out = torch::empty({n_items, r, n}, d.options());
    torch::Tensor a = torch::empty({n_items, r, n}, d.options());
    at::parallel_for(0, n_items, 1, [&](int64_t begin, int64_t end) {
      const torch::NoGradGuard no_grad;
      torch::Tensor xb = scratch_like(x, d.options()), dtd = torch::empty({r, r}, d.options());
      for (int64_t i = begin; i < end; ++i) {
        load(xb, x[i], true);
        torch::Tensor db = d[i], ab = a[i], ob = out[i];
        at::mm_out(dtd, db.t(), db);
        at::mm_out(ab, dtd, c[i]);                   // D^T D C
        at::div_out(ab, c[i], ab.add_(eps));         // A = C / (D^T D C + eps)
        at::mm_out(ob, db.t(), xb).mul_(ab);         // A * D^T X
      }
    });
    ctx->save_for_backward({x, d, a});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &d = saved[1], &a = saved[2];
    if (!grads[0].defined()) return {torch::zeros_like(x), torch::Tensor(), torch::Tensor(), torch::Tensor()};
    // Under create_graph (a penalty on this gradient, R1 of a D with this module): the same
    // dL/dx as batched ops autograd can differentiate again; linear in G, and [x > 0] is
    // piecewise constant, so G is all its second derivative flows to.
    if (torch::GradMode::is_enabled()) {
      const torch::Tensor g = grads[0].to(a.scalar_type());
      const torch::Tensor dx = torch::bmm(d, a * g) * (x > 0).to(a.scalar_type());
      return {dx.to(x.scalar_type()), torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
    torch::Tensor dx = torch::empty_like(x);  // x's dtype and strides (preserve_format)
    const torch::Tensor g = grads[0].to(a.scalar_type()).contiguous();
    const int64_t r = d.size(2), n = x.size(2);
    at::parallel_for(0, x.size(0), 1, [&](int64_t begin, int64_t end) {
      const torch::NoGradGuard no_grad;
      torch::Tensor xb = scratch_like(x, a.options()), gx = scratch_like(x, a.options());
      torch::Tensor ag = torch::empty({r, n}, a.options());
      for (int64_t i = begin; i < end; ++i) {
        at::mul_out(ag, a[i], g[i]);
        at::mm_out(gx, d[i], ag);        // D (A * G)
        load(xb, x[i], false);
        at::threshold_backward_out(gx, gx, xb, 0);  // ReLU': gx where x > 0, else 0
        dx[i].copy_(gx);
      }
    });
    return {dx, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

void nmf_updates_cpu(const torch::Tensor& x, torch::Tensor& bases, torch::Tensor& coef,
                     int64_t steps, bool relu, double inv_t, double eps) {
  check_shapes("nmf_updates_cpu", x, bases, coef);
  const torch::NoGradGuard no_grad;
  const bool init = !coef.defined();
  const torch::Tensor d = bases.clone(at::MemoryFormat::Contiguous);
  const int64_t dim = d.size(1), r = d.size(2), n = x.size(2);
  const torch::Tensor c = init ? torch::empty({x.size(0), r, n}, d.options())
                               : coef.clone(at::MemoryFormat::Contiguous);
  at::parallel_for(0, x.size(0), 1, [&](int64_t begin, int64_t end) {
    const torch::NoGradGuard no_grad;  // worker threads start with autograd's default
    const auto o = d.options();
    torch::Tensor xb = scratch_like(x, o);
    torch::Tensor dtx = torch::empty({r, n}, o), den_c = torch::empty({r, n}, o);
    torch::Tensor dtd = torch::empty({r, r}, o), cct = torch::empty({r, r}, o);
    torch::Tensor xct = torch::empty({dim, r}, o), den_d = torch::empty({dim, r}, o);
    for (int64_t i = begin; i < end; ++i) {
      load(xb, x[i], relu);
      torch::Tensor db = d[i], cb = c[i];
      if (init) cb.copy_(torch::softmax(at::mm_out(dtx, db.t(), xb).mul_(inv_t), 0));
      for (int64_t k = 0; k < steps; ++k) {
        // C <- C * (D^T X) / (D^T D C + eps)
        at::mm_out(dtx, db.t(), xb);
        at::mm_out(dtd, db.t(), db);
        at::mm_out(den_c, dtd, cb);
        cb.mul_(dtx).div_(den_c.add_(eps));
        // D <- D * (X C^T) / (D C C^T + eps)
        at::mm_out(xct, xb, cb.t());
        at::mm_out(cct, cb, cb.t());
        at::mm_out(den_d, db, cct);
        db.mul_(xct).div_(den_d.add_(eps));
      }
    }
  });
  bases = d;
  coef = c;
}

torch::Tensor nmf_final_update_cpu(const torch::Tensor& x, const torch::Tensor& bases,
                                   const torch::Tensor& coef, double eps) {
  check_shapes("nmf_final_update_cpu", x, bases, coef);
  if (!coef.defined()) fail("nmf_final_update_cpu: C is undefined");
  return NmfFinalUpdate::apply(x, bases, coef, eps);
}

}  // namespace hamgan
