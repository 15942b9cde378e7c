"""Oracle for layers/spectral_norm: torch.nn.utils.spectral_norm on Conv2d, Linear and
Embedding over three training-mode steps (outputs and u/v buffers), then eval mode, and
gradients of a two-forward (real, fake) loss as D sees it."""
import torch
import torch.nn as nn
from torch.nn.utils import spectral_norm

from common import out_dir, save, prefixed

out = out_dir()
torch.manual_seed(1)
cases = {
    "conv": (spectral_norm(nn.Conv2d(5, 7, 3, padding=1), eps=1e-6), lambda: torch.randn(2, 5, 6, 4)),
    "conv1x1": (spectral_norm(nn.Conv2d(6, 3, 1, bias=False), eps=1e-12), lambda: torch.randn(3, 6, 5, 5)),
    "linear": (spectral_norm(nn.Linear(9, 4), eps=1e-6), lambda: torch.randn(5, 9)),
    "embedding": (spectral_norm(nn.Embedding(10, 6), eps=1e-6), lambda: torch.randint(0, 10, (8,))),
}
for name, (m, make_x) in cases.items():
    d = prefixed("init", m.state_dict())
    m.train()
    for step in range(3):
        x = make_x()
        y = m(x)
        d[f"step{step}.x"], d[f"step{step}.y"] = x, y
        d[f"step{step}.u"], d[f"step{step}.v"] = m.weight_u.clone(), m.weight_v.clone()
    # Two forwards before one backward (D on real then fake), training mode.
    x1, x2 = make_x(), make_x()
    if x1.is_floating_point():
        x1.requires_grad_(True)
    loss = (m(x1) * 1.5).sum() + (m(x2) ** 2).sum()
    m.zero_grad()
    loss.backward()
    d["twice.x1"], d["twice.x2"], d["twice.loss"] = x1.detach(), x2, loss.detach()
    d["twice.grad_weight_orig"] = m.weight_orig.grad
    if x1.is_floating_point():
        d["twice.grad_x1"] = x1.grad
    d["twice.u"], d["twice.v"] = m.weight_u.clone(), m.weight_v.clone()
    m.eval()
    x = make_x()
    d["eval.x"], d["eval.y"] = x, m(x)
    d["eval.u"], d["eval.v"] = m.weight_u, m.weight_v
    save(out, name + ".pt", d)
