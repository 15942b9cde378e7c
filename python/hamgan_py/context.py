"""The global-context modules of hamgan's registry (layers/context/*.h), eval mode.

Every module maps B x C x H x W to the same shape. Each is rebuilt from config.json's context
block and the exported tensor names under "context." (which maps a form has: SAGAN's
theta/phi/g/o, the papers' wq/wk/wv, STT's q/v/o)."""
import torch
import torch.nn.functional as F
from torch import nn

from .layers import Conv, CondBatchNorm, _buffer


def _conv1x1(shapes, name):
    w = shapes.get(name + ".weight")
    if w is None:
        return None
    return Conv(w[1], w[0], 1, 0, False)


class _Tensors(nn.Module):
    """Registers the operator's own tensors (shapes from the export) as buffers."""

    def _own(self, shapes, names):
        for n in names:
            self.register_buffer(n, _buffer(shapes[n]))


# ---------------------------------------------------------------------------------------------
# Attention-like modules: y = x + gamma * branch(x) (layers/context/attention.h).

class _Attention(_Tensors):
    def __init__(self, shapes, q_names, k_names, v_names, o_name="o"):
        super().__init__()
        self.q_name = next((n for n in q_names if n + ".weight" in shapes), None)
        self.k_name = next((n for n in k_names if n + ".weight" in shapes), None)
        self.v_name = next(n for n in v_names if n + ".weight" in shapes)
        for n in (self.q_name, self.k_name, self.v_name, o_name):
            if n is not None and n + ".weight" in shapes:
                setattr(self, n, _conv1x1(shapes, n))
        self.o_name = o_name if o_name + ".weight" in shapes else None
        self.register_buffer("gamma", _buffer(()))

    def _map(self, name, t):
        return t if name is None else getattr(self, name)(t)

    def query(self, t):
        return self._map(self.q_name, t)

    def key(self, t):
        return self._map(self.k_name, t)

    def value(self, t):
        return getattr(self, self.v_name)(t)

    def output(self, t):
        return self._map(self.o_name, t)

    def forward(self, x, cond=None):
        return x + self.gamma * self.branch(x)


class SelfAttention(_Attention):
    """SAGAN (Zhang et al. 2019, Sec. 3): beta = softmax_keys(theta^T phi), y = W_o(g beta^T)."""

    def __init__(self, shapes, options):
        super().__init__(shapes, ["theta"], ["phi"], ["g"])
        self.pool = bool(options.get("pool", True))

    def branch(self, x):
        b, _, h, w = x.shape
        q = self.query(x).flatten(2)
        k, v = self.key(x), self.value(x)
        if self.pool:
            k, v = F.max_pool2d(k, 2), F.max_pool2d(v, 2)
        k, v = k.flatten(2), v.flatten(2)
        beta = torch.softmax(torch.bmm(q.transpose(1, 2), k), -1)
        return self.output(torch.bmm(v, beta.transpose(1, 2)).view(b, -1, h, w))


def kronecker_averages(t, h, w):
    """C = [H^T, L^T] (KAO Eq. 1): means over rows, then over columns; B x d x (w + h)."""
    m = t.view(t.shape[0], t.shape[1], h, w)
    return torch.cat([m.mean(2), m.mean(3)], 2)


def dot_attention(q, k, v):
    """V softmax(K^T Q), softmax over keys (column-wise)."""
    return torch.bmm(v, torch.softmax(torch.bmm(k.transpose(1, 2), q), 1))


def kronecker_outer_sum(o, h, w):
    ht, lt = o[:, :, :w], o[:, :, w:w + h]
    return lt.unsqueeze(3) + ht.unsqueeze(2)


class Kao(_Attention):
    """Kronecker attention (Gao & Ji, Sec. 3.1): kao_kv Eq. 2, kao_qkv Eq. 3."""

    def __init__(self, shapes, options, qkv):
        super().__init__(shapes, ["theta", "wq"], ["phi", "wk"], ["g", "wv"])
        self.qkv = qkv
        self.paper = "wv.weight" in shapes

    def branch(self, x):
        b, _, h, w = x.shape
        if not self.paper:
            q, k, v = self.query(x).flatten(2), self.key(x).flatten(2), self.value(x).flatten(2)
            if self.qkv:
                o = kronecker_outer_sum(dot_attention(kronecker_averages(q, h, w), kronecker_averages(k, h, w),
                                                      kronecker_averages(v, h, w)), h, w)
            else:
                o = dot_attention(q, kronecker_averages(k, h, w), kronecker_averages(v, h, w)).view(b, -1, h, w)
            return self.output(o)
        cx = kronecker_averages(x.flatten(2), h, w).unsqueeze(3)
        kc, vc = self.key(cx).flatten(2), self.value(cx).flatten(2)
        if self.qkv:
            return kronecker_outer_sum(dot_attention(self.query(cx).flatten(2), kc, vc), h, w)
        return dot_attention(self.query(x).flatten(2), kc, vc).view(b, -1, h, w)


class Sao(_Attention):
    """Siamese attention (Eq. 5-6): O = v_bar (w^T Q) + (1/N) V (K^T w)."""

    def __init__(self, shapes, options):
        super().__init__(shapes, ["theta"], ["phi"], ["g", "wv"])
        self._own(shapes, ["sim_w"])

    def branch(self, x):
        b, _, h, w = x.shape
        q = self.query(x).flatten(2)
        k = self.key(x).flatten(2)
        v = self.value(x).flatten(2)
        d, n = q.shape[1], q.shape[2]
        wv = self.sim_w.view(1, 1, d)
        wq = torch.matmul(wv, q)
        kw = torch.matmul(wv, k)
        vbar = v.mean(2, keepdim=True)
        glob = torch.bmm(v, kw.transpose(1, 2)) / float(n)
        o = torch.bmm(vbar, wq) + glob
        return self.output(o.view(b, o.shape[1], h, w))


def kron(a, b):
    """torch.kron for matrices as one broadcast product (the same single multiplications), which
    every ONNX opset expresses."""
    m, n = a.shape
    p, q = b.shape
    return (a.view(m, 1, n, 1) * b.view(1, p, 1, q)).reshape(m * p, n * q)


def kron_chain(factors):
    r = factors[0]
    for f in factors[1:]:
        r = kron(r, f)
    return r


def stt_dense_logits(q, a):
    """Z = Z_H + Z_W + Z_C (STT Eq. 14-17) from q: B x c x H x W; B x N x N."""
    x = q.permute(0, 2, 3, 1)  # B x H x W x c
    mh = torch.einsum("bhwc,h->bwc", x, a["zh_a1"])
    mw = torch.einsum("bhwc,w->bhc", x, a["zw_a2"])
    mc = torch.einsum("bhwc,c->bhw", x, a["zc_a3"])
    z = torch.matmul(torch.matmul(a["zh_a2"], mh), a["zh_a3"].t())
    z = z + torch.matmul(torch.matmul(a["zw_a1"], mw), a["zw_a3"].t())
    return z + torch.matmul(torch.matmul(a["zc_a1"], mc), a["zc_a2"].t())


_DENSE = ["zh_a1", "zh_a2", "zh_a3", "zw_a1", "zw_a2", "zw_a3", "zc_a1", "zc_a2", "zc_a3"]


def _factors(shapes, name):
    out, i = [], 0
    while f"{name}_{i}" in shapes:
        out.append(f"{name}_{i}")
        i += 1
    return out


class Stt(_Attention):
    """Tensor synthesizers (Zhu et al., Sec. 3): y = softmax(Z) V with Z from the operator."""

    def __init__(self, shapes, options, kind):
        uses_query = kind in ("stt_dense", "stt_dense_factorized", "stt_mixture")
        super().__init__(shapes, ["q"] if uses_query else [], [], ["v"])
        self.kind = kind
        self.uses_query = uses_query
        self.factored = {}
        if kind == "stt_dense":
            self._own(shapes, _DENSE)
        elif kind == "stt_dense_factorized":
            self._own(shapes, ["zh_a1", "zw_a2", "zc_a3"])
            for n in ["zh_a2", "zh_a3", "zw_a1", "zw_a3", "zc_a1", "zc_a2"]:
                self.factored[n] = _factors(shapes, n)
                self._own(shapes, self.factored[n])
        elif kind == "stt_random":
            self._own(shapes, ["r"])
        elif kind == "stt_random_factorized":
            self.r_names = _factors(shapes, "r")
            self._own(shapes, self.r_names)
        elif kind == "stt_mixture":
            self._own(shapes, _DENSE)
            self.r_names = _factors(shapes, "r")
            self._own(shapes, self.r_names + ["theta_logits"])
        else:
            raise ValueError(f"unknown STT operator {kind}")

    def _dense(self):
        return {n: getattr(self, n) for n in _DENSE}

    def logits(self, q):
        if self.kind == "stt_dense":
            return stt_dense_logits(q, self._dense())
        if self.kind == "stt_dense_factorized":
            a = {n: getattr(self, n) for n in ["zh_a1", "zw_a2", "zc_a3"]}
            for n, names in self.factored.items():
                a[n] = kron_chain([getattr(self, f) for f in names])
            return stt_dense_logits(q, a)
        if self.kind == "stt_random":
            return self.r
        r = kron_chain([getattr(self, f) for f in self.r_names])
        if self.kind == "stt_random_factorized":
            return r
        t = torch.softmax(self.theta_logits, 0)
        return t[0] * r + t[1] * stt_dense_logits(q, self._dense())

    def branch(self, x):
        q = self.query(x) if self.uses_query else None  # paper form: X itself
        v = self.value(x)
        s = torch.softmax(self.logits(q), -1)
        y = torch.matmul(v.flatten(2), s.transpose(-1, -2)).view(v.shape)
        return self.output(y)


# ---------------------------------------------------------------------------------------------
# Hamburger (Geng et al. 2021): y = x + sigma * N(W_u(M(W_l(x)))), M a matrix decomposition.

def normalize_columns(t):
    return F.normalize(t, p=2.0, dim=1, eps=1e-6)


def soft_assign(x, bases, temperature):
    cos = torch.bmm(normalize_columns(bases).transpose(1, 2), normalize_columns(x))
    return torch.softmax(cos / temperature, 1)


NMF_EPS = 1e-6
VQ_EPS = 1e-6


def nmf_final(x, bases, coef):
    bt = bases.transpose(1, 2)
    return coef * torch.bmm(bt, x) / (torch.bmm(torch.bmm(bt, bases), coef) + NMF_EPS)


def solve_nmf(x, bases, steps, inv_t):
    """Alg. 2: multiplicative updates, C first then D, from C = softmax_r(inv_t D^T X)."""
    x = torch.relu(x)
    coef = torch.softmax(inv_t * torch.bmm(bases.transpose(1, 2), x), 1)
    for _ in range(steps):
        coef = nmf_final(x, bases, coef)
        ct = coef.transpose(1, 2)
        bases = bases * torch.bmm(x, ct) / (torch.bmm(bases, torch.bmm(coef, ct)) + NMF_EPS)
    return bases, nmf_final(x, bases, coef)


def solve_vq(x, bases, steps, temperature):
    """Alg. 1: soft K-means, D the C-weighted means."""
    for _ in range(steps):
        coef = soft_assign(x, bases, temperature)
        bases = torch.bmm(x, coef.transpose(1, 2)) / (coef.sum(2).unsqueeze(1) + VQ_EPS)
    return bases, soft_assign(x, bases, temperature)


def solve_cd(x, bases, steps, temperature, beta):
    """Alg. 3 / Eq. 14: spherical K-means for D, then C = (D^T D + beta I)^{-1} D^T X by Cholesky."""
    for _ in range(steps):
        coef = soft_assign(x, bases, temperature)
        bases = normalize_columns(torch.bmm(x, coef.transpose(1, 2)))
    bt = bases.transpose(1, 2)
    eye = torch.eye(bases.shape[2], dtype=bases.dtype)
    lower = torch.linalg.cholesky(torch.bmm(bt, bases) + beta * eye)
    y = torch.linalg.solve_triangular(lower, torch.bmm(bt, x), upper=False)
    return bases, torch.linalg.solve_triangular(lower.transpose(1, 2), y, upper=True)


class Hamburger(nn.Module):
    def __init__(self, shapes, options, resolved, kind, cond_kind, cond_dim, eps):
        super().__init__()
        self.kind = kind
        self.d, self.r, self.groups = int(resolved["d"]), int(resolved["r"]), int(resolved["groups"])
        self.steps = int(resolved["eval_steps"])
        self.random_bases = bool(resolved["random_bases"])
        self.temperature = float(options.get("temperature", 0.1))
        self.beta = float(options.get("beta", 0.1))
        self.inv_t = float(options.get("inv_t", 1.0))
        self.normalize_bases = bool(options.get("normalize_bases", False))
        self.lower = _conv1x1(shapes, "lower")
        self.upper = _conv1x1(shapes, "upper")
        self.norm = None
        if "norm.bn.running_mean" in shapes:
            self.norm = CondBatchNorm(self.upper.weight.shape[0], cond_kind, cond_dim, eps)
        self.register_buffer("sigma", _buffer(()))
        if not self.random_bases:
            self.register_buffer("bases", _buffer(shapes["bases"]))

    def draw_bases(self, batch, generator=None):
        """A random initial D (batch * groups) x d x r as the ham draws it (nmf: U[0, 1); vq, cd:
        unit-norm Gaussian columns)."""
        shape = (batch * self.groups, self.d, self.r)
        if self.kind == "ham_nmf":
            b = torch.rand(shape, generator=generator)
            return normalize_columns(b) if self.normalize_bases else b
        return normalize_columns(torch.randn(shape, generator=generator))

    def forward(self, x, cond, bases=None):
        b, _, h, w = x.shape
        s, d, r = self.groups, self.d, self.r
        raw = self.lower(x).reshape(b * s, d, h * w)
        if bases is None:
            bases = self.bases.repeat(b, 1, 1) if not self.random_bases else self.draw_bases(b).to(raw.dtype)
        if self.kind == "ham_nmf":
            db, coef = solve_nmf(raw, bases, self.steps, self.inv_t)
        elif self.kind == "ham_vq":
            db, coef = solve_vq(raw, bases, self.steps, self.temperature)
        else:
            db, coef = solve_cd(raw, bases, self.steps, self.temperature, self.beta)
        c = self.upper.weight.shape[0]
        # W_u (D C) = (W_u D) C, as hamgan computes it.
        wu = self.upper.weight.view(1, c, s, d).permute(0, 2, 1, 3)
        wd = torch.matmul(wu, db.reshape(b, s, d, r)).permute(0, 2, 1, 3).reshape(b, c, s * r)
        coef = coef.reshape(b, s * r, h * w)
        if self.norm is None:
            wd = self.sigma * wd
        out = torch.bmm(wd, coef).view(b, -1, h, w)
        if self.norm is not None:
            out = self.sigma * self.norm(out, cond)
        return x + out


def build_context(ctx, shapes, cond_kind, cond_dim, eps):
    """The module for config.json's context block; None for type none."""
    kind, options = ctx["type"], ctx.get("options", {})
    if kind == "none":
        return None
    if kind == "self_attention":
        return SelfAttention(shapes, options)
    if kind in ("kao_kv", "kao_qkv"):
        return Kao(shapes, options, kind == "kao_qkv")
    if kind == "sao":
        return Sao(shapes, options)
    if kind.startswith("stt_"):
        return Stt(shapes, options, kind)
    if kind in ("ham_nmf", "ham_vq", "ham_cd"):
        return Hamburger(shapes, options, ctx["resolved"], kind, cond_kind, cond_dim, eps)
    raise ValueError(f"context module '{kind}' is not known to this hamgan_py (known: none, self_attention, "
                     "ham_nmf, ham_vq, ham_cd, kao_kv, kao_qkv, sao, stt_dense, stt_random, stt_dense_factorized, "
                     "stt_random_factorized, stt_mixture)")
