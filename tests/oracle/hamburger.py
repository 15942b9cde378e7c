"""Oracle for the Hamburger context modules (Geng et al. 2021): NMF (Alg. 2), soft VQ
(Alg. 1) and soft CD (App. B, Alg. 3 / Eq. 14) hams inside the GAN bread
y = x + sigma * N(W_u(M(W_l(x)))), written from the paper's algorithms. The random initial
dictionaries are drawn here and handed to the C++ modules (no shared RNG streams).

Writes cases.txt (one line per module case: name|C|cond classes|B|H|W|yaml options) and one
.pt per case, plus m_<ham>.pt with the bare decomposition in double precision, and
its one-step and BPTT input gradients computed by their definitions (Sec. 2.3)."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from common import out_dir, save, prefixed
from sagan_ref import CondBN, sn_conv, randomize_

out = out_dir()
EPS = 1e-6


def normalize(t):
    """Columns (dim 1 = d) to unit L2 norm, norms clamped at 1e-6."""
    return F.normalize(t, p=2, dim=1, eps=EPS)


def cosine(D, X):
    """cosine(D, X)_ij = d_i^T x_j / (|d_i| |x_j|), (batch x r x n)."""
    return normalize(D).transpose(1, 2) @ normalize(X)


class NMF:
    """Alg. 2: multiplicative updates of C then D; C0 = softmax_r(inv_t D^T X) (App. F)."""

    def __init__(self, inv_t=1.0):
        self.inv_t = inv_t

    def prepare(self, x):
        return F.relu(x)

    def rand(self, shape, g):
        return torch.rand(shape, generator=g)

    def init(self, X, D):
        return F.softmax(self.inv_t * D.transpose(1, 2) @ X, dim=1)

    def update_c(self, X, D, C):
        Dt = D.transpose(1, 2)
        return C * (Dt @ X) / (Dt @ D @ C + EPS)

    def step(self, X, D, C):
        C = self.update_c(X, D, C)
        Ct = C.transpose(1, 2)
        D = D * (X @ Ct) / (D @ C @ Ct + EPS)
        return D, C

    final = update_c


class VQ:
    """Alg. 1: C = softmax(cosine(D, X) / T) column-wise; D = X C^T diag(C 1_n)^-1."""

    def __init__(self, temperature=0.1):
        self.t = temperature

    def prepare(self, x):
        return x

    def rand(self, shape, g):
        return normalize(torch.randn(shape, generator=g))

    def init(self, X, D):
        return None

    def assign(self, X, D):
        return F.softmax(cosine(D, X) / self.t, dim=1)

    def step(self, X, D, C):
        C = self.assign(X, D)
        ones = torch.ones(X.shape[0], X.shape[2], 1, dtype=X.dtype)
        D = X @ C.transpose(1, 2) @ torch.diag_embed(1.0 / ((C @ ones).squeeze(2) + EPS))
        return D, C

    def final(self, X, D, C):
        return self.assign(X, D)


class CD(VQ):
    """Alg. 3: spherical K-means D = normalize(X C^T), then C = (D^T D + beta I)^-1 D^T X."""

    def __init__(self, temperature=0.1, beta=0.1):
        super().__init__(temperature)
        self.beta = beta

    def step(self, X, D, C):
        C = self.assign(X, D)
        return normalize(X @ C.transpose(1, 2)), C

    def final(self, X, D, C):
        Dt = D.transpose(1, 2)
        eye = torch.eye(D.shape[2], dtype=D.dtype)
        return torch.inverse(Dt @ D + self.beta * eye) @ Dt @ X


def run_steps(ham, X, D, K):
    C = ham.init(X, D)
    for _ in range(K):
        D, C = ham.step(X, D, C)
    return D, C


def decompose(ham, X, D0, K, grad):
    """Output D C after K steps and the final C update; one_step: the K steps are constants."""
    if grad == "one_step":
        with torch.no_grad():
            D, C = run_steps(ham, X, D0, K)
        D, C = D.detach(), C.detach()
    else:
        D, C = run_steps(ham, X, D0, K)
    return D @ ham.final(X, D, C), D


class Hamburger(nn.Module):
    def __init__(self, ch, ham, cond_classes, groups=1, d=0, r=0, steps=6, eval_steps=0,
                 grad="one_step", init="random", momentum=0.9):
        super().__init__()
        self.ham, self.S = ham, groups
        self.d = d or ch
        self.r = r or self.d // 8
        self.steps, self.eval_steps = steps, eval_steps or steps
        self.grad, self.init, self.momentum = grad, init, momentum
        self.lower = sn_conv(ch, groups * self.d, 1, bias=False)
        self.upper = sn_conv(groups * self.d, ch, 1, bias=False)
        self.norm = CondBN(ch, "labels", cond_classes) if cond_classes else None
        self.sigma = nn.Parameter(torch.tensor(0.0))
        if init != "random":
            self.register_buffer("bases", torch.zeros(groups, self.d, self.r))
        self.next_bases = None

    def forward(self, x, c=None):
        B, _, H, W = x.shape
        h = self.ham.prepare(self.lower(x)).reshape(B * self.S, self.d, H * W)
        D0 = self.next_bases if self.init == "random" else self.bases.repeat(B, 1, 1)
        K = self.steps if self.training else self.eval_steps
        m, D = decompose(self.ham, h, D0, K, self.grad)
        if self.init == "online" and self.training:
            with torch.no_grad():
                mean = D.reshape(B, self.S, self.d, self.r).mean(0)
                self.bases.copy_(normalize(self.bases + self.momentum * (mean - self.bases)))
        y = self.upper(m.reshape(B, self.S * self.d, H, W))
        if self.norm is not None:
            y = self.norm(y, c)
        return x + self.sigma * y


HAMS = {"nmf": lambda o: NMF(o.get("inv_t", 1.0)),
        "vq": lambda o: VQ(o.get("temperature", 0.1)),
        "cd": lambda o: CD(o.get("temperature", 0.1), o.get("beta", 0.1))}
MODULE_KEYS = ("groups", "d", "r", "steps", "eval_steps", "grad", "init", "momentum")

# name, ham, C, cond classes (0: D, no norm), B, H, W, options
CASES = [
    ("nmf_g", "nmf", 16, 5, 3, 5, 3, {}),
    ("nmf_d_bptt_groups", "nmf", 12, 0, 2, 4, 6,
     {"groups": 2, "d": 6, "r": 3, "steps": 3, "eval_steps": 5, "grad": "bptt", "inv_t": 2.0}),
    ("nmf_online", "nmf", 8, 0, 2, 3, 5, {"init": "online", "momentum": 0.3, "r": 2}),
    ("nmf_fixed_g_bptt", "nmf", 8, 3, 2, 5, 4,
     {"init": "fixed", "groups": 2, "d": 4, "r": 2, "grad": "bptt"}),
    ("vq_g", "vq", 16, 5, 3, 3, 5, {}),
    ("vq_d_bptt_groups", "vq", 12, 0, 2, 6, 4,
     {"grad": "bptt", "temperature": 0.5, "groups": 2, "d": 6, "r": 3, "steps": 2, "eval_steps": 4}),
    ("vq_online", "vq", 8, 0, 2, 3, 5, {"init": "online", "d": 8, "r": 3}),
    ("cd_g", "cd", 16, 5, 3, 5, 3, {}),
    ("cd_d_bptt_groups", "cd", 12, 0, 2, 4, 6,
     {"grad": "bptt", "beta": 0.01, "temperature": 1.0, "groups": 2, "d": 6, "r": 3}),
    ("cd_fixed", "cd", 8, 0, 2, 5, 3, {"init": "fixed", "r": 2, "steps": 3}),
    ("cd_online_bptt", "cd", 8, 3, 2, 3, 5, {"init": "online", "r": 2, "grad": "bptt", "momentum": 0.5}),
]


def run_case(i, name, kind, ch, classes, B, H, W, opt):
    seed = 100 + 10 * i
    g = torch.Generator().manual_seed(seed)
    ham = HAMS[kind](opt)
    m = Hamburger(ch, ham, classes, **{k: v for k, v in opt.items() if k in MODULE_KEYS})
    randomize_(m, seed)
    with torch.no_grad():
        m.sigma.fill_(0.7)
        if m.init != "random":
            m.bases.copy_(ham.rand(m.bases.shape, g))
    d = prefixed("init", m.state_dict())
    x = torch.randn(B, ch, H, W, generator=g).requires_grad_(True)
    c = torch.randint(0, max(classes, 1), (B,), generator=g)
    shape = (B * m.S, m.d, m.r)
    if m.init == "random":  # fixed and online start from the `bases` buffer
        d["bases0.train"], d["bases0.eval"] = ham.rand(shape, g), ham.rand(shape, g)
    m.train()
    m.next_bases = d.get("bases0.train")
    y = m(x, c)
    r = torch.randn(y.shape, generator=g)
    (y * r).sum().backward()
    d.update({"x": x.detach(), "c": c, "r": r, "train.y": y, "train.grad_x": x.grad})
    for k, p in m.named_parameters():
        d["train.grad." + k] = p.grad if p.grad is not None else torch.zeros_like(p)
    d.update(prefixed("after", m.state_dict()))
    m.eval()
    m.next_bases = d.get("bases0.eval")
    with torch.no_grad():
        d["eval.y"] = m(x.detach(), c)
    save(out, name + ".pt", d)
    yaml = "{type: ham_%s%s}" % (kind, "".join(", %s: %s" % (k, v) for k, v in opt.items()))
    return "|".join(str(v) for v in (name, ch, classes, B, H, W, yaml))


def run_bare(kind, ham, K=4):
    """The decomposition alone in double: one-step gradient = autograd through the final C
    update with D_K, C_K as constants (Eq. 13); BPTT = autograd through all K steps."""
    g = torch.Generator().manual_seed(7)
    X = ham.prepare(torch.randn(2, 6, 15, generator=g, dtype=torch.float64))
    D0 = ham.rand((2, 6, 3), g).double()
    r = torch.randn(2, 6, 15, generator=g, dtype=torch.float64)
    d = {"X": X, "D0": D0, "r": r}
    # one_step by its definition: run the algorithm on plain tensors, then differentiate the
    # last update alone.
    DK, CK = run_steps(ham, X.clone(), D0.clone(), K)
    Xg = X.clone().requires_grad_(True)
    y = DK @ ham.final(Xg, DK, CK)
    (y * r).sum().backward()
    d["y"], d["grad.one_step"] = y.detach(), Xg.grad
    Xg = X.clone().requires_grad_(True)
    D, C = run_steps(ham, Xg, D0.clone(), K)
    y2 = D @ ham.final(Xg, D, C)
    (y2 * r).sum().backward()
    d["grad.bptt"] = Xg.grad
    assert torch.allclose(y, y2)
    assert not torch.allclose(d["grad.one_step"], d["grad.bptt"], rtol=1e-3, atol=1e-6)
    save(out, "m_%s.pt" % kind, d)


lines = [run_case(i, *case) for i, case in enumerate(CASES)]
with open(os.path.join(out, "cases.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
run_bare("nmf", NMF(1.0))
run_bare("vq", VQ(0.5))
run_bare("cd", CD(0.5, 0.1))
