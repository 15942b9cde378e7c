"""Oracle for the tensor synthesizers (Zhu et al., STT, Sec. 3, Eq. 7, 10, 14-23), written
from the paper's equations: n-mode products per Eq. 7 on each sample's H x W x c tensor,
Kronecker products by the block form of Eq. 10, Y = Softmax(Z) V. Positions are flattened
row-major (p = h * W + w), the convention hamgan's module documents. Wrapping as hamgan's
stt_attention.h: SAGAN projections (1x1 SN convs, no bias) or the paper's (raw X, V = W_V X
with d = C, no output conv), y = x + gamma * o. Training-mode forward + backward, then eval.
H != W everywhere."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import out_dir, save, prefixed
from sagan_ref import sn_conv, randomize_

out = out_dir()


def nmode(x, a, n):
    """Eq. 7: (X x_n A)[.., j, ..] = sum_i X[.., i, ..] A[j, i]."""
    return torch.movedim(torch.tensordot(x, a, dims=([n], [1])), -1, n)


def kron(a, b):
    """Eq. 10: block matrix [A_ij B]."""
    return torch.cat([torch.cat([a[i, j] * b for j in range(a.shape[1])], 1)
                      for i in range(a.shape[0])], 0)


def kron_all(fs):
    r = fs[0]
    for f in fs[1:]:
        r = kron(r, f)
    return r


class STT(nn.Module):
    def __init__(self, kind, ch, h, w, paper=False, learned=True, rows=None, cols=None,
                 cols_h=None, cols_w=None, cols_c=None, theta_init=0.5):
        super().__init__()
        self.kind, self.paper, self.h, self.w = kind, paper, h, w
        n = h * w
        uses_query = kind in ("dense", "dense_factorized", "mixture")
        c = ch if paper else ch // 8
        d = ch if paper else ch // 2
        if uses_query and not paper:
            self.q = sn_conv(ch, c, 1, bias=False)
        self.v = sn_conv(ch, d, 1, bias=False)
        if not paper:
            self.o = sn_conv(d, ch, 1, bias=False)
        self.gamma = nn.Parameter(torch.tensor(0.0))
        P = lambda *s: nn.Parameter(torch.zeros(*s))
        if kind in ("dense", "mixture"):
            self.zh_a1, self.zh_a2, self.zh_a3 = P(h), P(n, w), P(n, c)
            self.zw_a1, self.zw_a2, self.zw_a3 = P(n, h), P(w), P(n, c)
            self.zc_a1, self.zc_a2, self.zc_a3 = P(n, h), P(n, w), P(c)
        if kind == "random":
            if learned:
                self.r = P(n, n)
            else:
                self.register_buffer("r", torch.zeros(n, n))
        if kind in ("random_factorized", "mixture"):
            rows, cols = rows or [h, w], cols or [h, w]
            self.nr = len(rows)
            for i, (a, b) in enumerate(zip(rows, cols)):
                if learned:
                    setattr(self, f"r_{i}", P(a, b))
                else:
                    self.register_buffer(f"r_{i}", torch.zeros(a, b))
        if kind == "mixture":
            self.theta_logits = nn.Parameter(
                torch.tensor([theta_init, 1 - theta_init]).log())
        if kind == "dense_factorized":
            rows = rows or [h, w]
            shapes = {"h": cols_h or [h, 1], "w": cols_w or [1, w], "c": cols_c or [1, c]}
            self.zh_a1, self.zw_a2, self.zc_a3 = P(h), P(w), P(c)
            self.nf = len(rows)
            for name, mode in [("zh_a2", "w"), ("zh_a3", "c"), ("zw_a1", "h"),
                               ("zw_a3", "c"), ("zc_a1", "h"), ("zc_a2", "w")]:
                for i, (a, b) in enumerate(zip(rows, shapes[mode])):
                    setattr(self, f"{name}_{i}", P(a, b))

    def mat(self, name):
        if self.kind != "dense_factorized":
            return getattr(self, name)
        return kron_all([getattr(self, f"{name}_{i}") for i in range(self.nf)])  # Eq. 19

    def dense_z(self, x):
        """Eq. 14-17 on one sample x: H x W x c."""
        z_h = nmode(nmode(nmode(x, self.zh_a1.view(1, -1), 0), self.mat("zh_a2"), 1),
                    self.mat("zh_a3"), 2)[0]
        z_w = nmode(nmode(nmode(x, self.mat("zw_a1"), 0), self.zw_a2.view(1, -1), 1),
                    self.mat("zw_a3"), 2)[:, 0, :]
        z_c = nmode(nmode(nmode(x, self.mat("zc_a1"), 0), self.mat("zc_a2"), 1),
                    self.zc_a3.view(1, -1), 2)[:, :, 0]
        return z_h + z_w + z_c

    def forward(self, x):
        b, ch, h, w = x.shape
        assert (h, w) == (self.h, self.w)
        query = x if self.paper else (self.q(x) if hasattr(self, "q") else None)
        v = self.v(x)
        ys = []
        for s in range(b):
            if self.kind == "random":
                z = self.r
            elif self.kind == "random_factorized":
                z = kron_all([getattr(self, f"r_{i}") for i in range(self.nr)])  # Eq. 21
            else:
                z = self.dense_z(query[s].permute(1, 2, 0))
                if self.kind == "mixture":  # Eq. 23
                    th = F.softmax(self.theta_logits, 0)
                    r = kron_all([getattr(self, f"r_{i}") for i in range(self.nr)])
                    z = th[0] * r + th[1] * z
            vs = v[s].reshape(v.shape[1], h * w).t()  # HW x d, row-major positions
            y = F.softmax(z, -1) @ vs                   # Eq. 12-13
            ys.append(y.t().reshape(v.shape[1], h, w))
        y = torch.stack(ys)
        if not self.paper:
            y = self.o(y)
        return x + self.gamma * y


def run(name, module, x, seed):
    randomize_(module, seed)
    g = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        for k, buf in module.named_buffers():
            if k == "r" or k.startswith("r_"):
                buf.normal_(0, 0.5, generator=g)
    d = prefixed("init", module.state_dict())
    module.train()
    x = x.clone().requires_grad_(True)
    y = module(x)
    r = torch.randn(y.shape, generator=torch.Generator().manual_seed(seed + 1))
    (y * r).sum().backward()
    d["train.y"], d["r"], d["in0"], d["train.grad_in0"] = y, r, x.detach(), x.grad
    for k, p in module.named_parameters():
        d["train.grad." + k] = p.grad if p.grad is not None else torch.zeros_like(p)
    d.update(prefixed("after", module.state_dict()))
    module.eval()
    d["eval.y"] = module(x.detach())
    save(out, name + ".pt", d)


torch.manual_seed(0)
H, W, C = 6, 4, 16
x = lambda: torch.randn(2, C, H, W)
run("dense", STT("dense", C, H, W), x(), 20)
run("dense_paper", STT("dense", C, H, W, paper=True), x(), 21)
run("random", STT("random", C, H, W), x(), 22)
run("random_fixed", STT("random", C, H, W, learned=False), x(), 23)
run("random_paper", STT("random", C, H, W, paper=True), x(), 24)
run("dense_factorized", STT("dense_factorized", C, H, W), x(), 25)
run("dense_factorized_3", STT("dense_factorized", C, H, W, rows=[2, 3, 4], cols_h=[2, 3, 1],
                              cols_w=[1, 2, 2], cols_c=[1, 2, 1]), x(), 26)
run("dense_factorized_paper", STT("dense_factorized", C, H, W, paper=True), x(), 27)
run("random_factorized", STT("random_factorized", C, H, W), x(), 28)
run("random_factorized_3", STT("random_factorized", C, H, W, rows=[2, 3, 4], cols=[4, 3, 2]),
    x(), 29)
run("random_factorized_fixed", STT("random_factorized", C, H, W, learned=False,
                                   rows=[8, 3], cols=[2, 12]), x(), 30)
run("mixture", STT("mixture", C, H, W, theta_init=0.3), x(), 31)
run("mixture_fixed", STT("mixture", C, H, W, learned=False, rows=[4, 6], cols=[24, 1]), x(), 32)
run("mixture_paper", STT("mixture", C, H, W, paper=True), x(), 33)
