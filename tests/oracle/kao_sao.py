"""Oracle for the Kronecker attention operators (KAO_KV, KAO_QKV; Gao & Ji, Sec. 3.1, Eq. 1-3)
and the Siamese attention operator (SAO, Sec. 3.1-3.2, Eq. 4-5), written from the papers'
equations: slice averages by explicit sums over slices, attention as V softmax(K^T Q) with
column-wise softmax, and SAO by its N x N definition (Eq. 5), not the factorized Eq. 6.
Each with SAGAN's projections and with the paper's, in training mode then eval mode, with
input and weight gradients; H != W; and inside full G and D at 32x32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import out_dir, save, prefixed
from sagan_ref import Generator, Discriminator, sn_conv, randomize_

out = out_dir()
torch.manual_seed(0)


def kron_avg(t):
    """t: B x d x h x w -> C = [H^T, L^T]: B x d x (w + h) (Eq. 1)."""
    h, w = t.shape[2], t.shape[3]
    H = sum(t[:, :, i, :] for i in range(h)) / h  # average of horizontal slices: B x d x w
    L = sum(t[:, :, :, j] for j in range(w)) / w  # average of lateral slices: B x d x h
    return torch.cat([H, L], 2)


def attn(Q, K, V):
    """O = V softmax(K^T Q), softmax over each column (one column per query)."""
    E = torch.einsum("bdk,bdq->bkq", K, Q)
    return torch.einsum("bpk,bkq->bpq", V, F.softmax(E, dim=1))


def outer_sum(O, h, w):
    """Frontal slice p of Y: Y[i, j] = L~[i] + H~[j] (Eq. 3)."""
    Ht, Lt = O[:, :, :w], O[:, :, w:]
    return torch.einsum("bpi,j->bpij", Lt, torch.ones(w)) + torch.einsum("bpj,i->bpij", Ht, torch.ones(h))


def sao(Q, K, V, w):
    """o_i = 1/N sum_j v_j (q_i + k_j)^T w (Eq. 5), through the N x N score matrix."""
    n = Q.shape[2]
    S = torch.einsum("bdi,d->bi", Q, w)[:, :, None] + torch.einsum("bdj,d->bj", K, w)[:, None, :]
    return torch.einsum("bpj,bij->bpi", V, S) / n


class Sagan(nn.Module):
    """SAGAN's projections (C/8, C/8, C/2, out to C), y = x + gamma * o(op)."""

    def __init__(self, ch, kind):
        super().__init__()
        self.kind = kind
        self.theta = sn_conv(ch, ch // 8, 1, bias=False)
        self.phi = sn_conv(ch, ch // 8, 1, bias=False)
        self.g = sn_conv(ch, ch // 2, 1, bias=False)
        self.o = sn_conv(ch // 2, ch, 1, bias=False)
        self.gamma = nn.Parameter(torch.tensor(0.0))
        if kind == "sao":
            self.sim_w = nn.Parameter(torch.randn(ch // 8))

    def forward(self, x, c=None):
        b, _, h, w = x.shape
        q, k, v = self.theta(x), self.phi(x), self.g(x)
        if self.kind == "kao_kv":
            o = attn(q.flatten(2), kron_avg(k), kron_avg(v)).view(b, -1, h, w)
        elif self.kind == "kao_qkv":
            o = outer_sum(attn(kron_avg(q), kron_avg(k), kron_avg(v)), h, w)
        else:
            o = sao(q.flatten(2), k.flatten(2), v.flatten(2), self.sim_w).view(b, -1, h, w)
        return x + self.gamma * self.o(o)


class Paper(nn.Module):
    """KAO: O = W_V V softmax((W_K K)^T W_Q Q) (c x c maps, projecting X before averaging);
    SAO: only V transformed, Q = K = X. y = x + gamma * O."""

    def __init__(self, ch, kind):
        super().__init__()
        self.kind = kind
        if kind != "sao":
            self.wq = sn_conv(ch, ch, 1, bias=False)
            self.wk = sn_conv(ch, ch, 1, bias=False)
        self.wv = sn_conv(ch, ch, 1, bias=False)
        if kind == "sao":
            self.sim_w = nn.Parameter(torch.randn(ch))
        self.gamma = nn.Parameter(torch.tensor(0.0))

    def forward(self, x, c=None):
        b, ch, h, w = x.shape
        if self.kind == "kao_kv":
            o = attn(self.wq(x).flatten(2), kron_avg(self.wk(x)), kron_avg(self.wv(x))).view(b, ch, h, w)
        elif self.kind == "kao_qkv":
            o = outer_sum(attn(kron_avg(self.wq(x)), kron_avg(self.wk(x)), kron_avg(self.wv(x))), h, w)
        else:
            X = x.flatten(2)
            o = sao(X, X, self.wv(x).flatten(2), self.sim_w).view(b, ch, h, w)
        return x + self.gamma * o


def run(name, module, x, seed):
    randomize_(module, seed)
    d = prefixed("init", module.state_dict())
    module.train()
    xs = x.clone().requires_grad_(True)
    y = module(xs)
    r = torch.randn(y.shape, generator=torch.Generator().manual_seed(seed + 1))
    (y * r).sum().backward()
    d["in"], d["r"], d["train.y"], d["train.grad_in"] = x, r, y, xs.grad
    for k, p in module.named_parameters():
        d["train.grad." + k] = p.grad
    d.update(prefixed("after", module.state_dict()))
    module.eval()
    with torch.no_grad():
        d["eval.y"] = module(x)
    save(out, name + ".pt", d)


KINDS = ["kao_kv", "kao_qkv", "sao"]
for i, kind in enumerate(KINDS):
    run(kind + "_sagan", Sagan(16, kind), torch.randn(2, 16, 6, 4), 20 + i)
    run(kind + "_paper", Paper(16, kind), torch.randn(2, 16, 3, 5), 30 + i)


def make(kind):
    return lambda name, ch, h, w, ck, cd: Sagan(ch, name)


# Full G (train forward + backward of sum(x * r)) and D (train forward + backward) at 32.
for i, kind in enumerate(KINDS):
    g = Generator(32, 4, 5, 16, 1, context=kind, context_res=32, make_context=make(kind))
    randomize_(g, 40 + i)
    gen = torch.Generator().manual_seed(40 + i)
    d = prefixed("init", g.state_dict())
    z = torch.randn(3, 16, generator=gen)
    y = torch.randint(0, 5, (3,), generator=gen)
    g.train()
    img = g(z, y)
    r = torch.randn(img.shape, generator=gen)
    (img * r).sum().backward()
    d["z"], d["y"], d["r"], d["train.x"] = z, y, r, img
    for k, p in g.named_parameters():
        d["train.grad." + k] = p.grad if p.grad is not None else torch.zeros_like(p)
    save(out, "g32_" + kind + ".pt", d)

    dm = Discriminator(32, 4, 5, 1, context=kind, context_res=16, make_context=make(kind))
    randomize_(dm, 50 + i)
    gen = torch.Generator().manual_seed(50 + i)
    d = prefixed("init", dm.state_dict())
    x = torch.randn(3, 1, 32, 32, generator=gen).requires_grad_(True)
    y = torch.randint(0, 5, (3,), generator=gen)
    dm.train()
    o = dm(x, y)
    o.sum().backward()
    d["x"], d["y"], d["train.out"], d["train.grad_x"] = x.detach(), y, o, x.grad
    for k, p in dm.named_parameters():
        d["train.grad." + k] = p.grad
    save(out, "d32_" + kind + ".pt", d)
