#!/usr/bin/env python3
"""An independent PyTorch run of the 128 px smoke preset, to tell whether the border stripes
of early HamGAN-128 samples (docs/band/README.md) come from hamgan's code or from the method.

  /usr/bin/python3 scripts/band_reference.py --data train.packed --out DIR --seed S
      [--context ham_nmf|self_attention] [--iterations 150] [--ch 16] [--batch 8] [--threads 1]
      [--init CKPT]

Trains G and D of configs/imagenet128_cpu_smoke.yaml (BigGAN/SAGAN blocks at ch 16, the NMF
Hamburger at 32x32 in G (d 256, r 32, with class-conditional BN) and D (d 128, r 16), K = 6,
one-step gradient, random bases per forward) with nothing of hamgan but the packed file's bytes:
the layers are tests/oracle/sagan_ref.py's (torch.nn.utils.spectral_norm, nn.BatchNorm2d), the
Hamburger is written here from Geng et al. 2021 (Alg. 2, App. F), the loop from BigGAN-PyTorch
(orthogonal init of Conv2d / Linear / Embedding weights, hinge loss, Adam (0, 0.999) at 1e-4 / 4e-4,
one D step per G step, reals flipped at random). Then the EMA G (decay min(0.9999,
0.5^(1 / (0.05 t))) from iteration 50, as train.ema_*) with standing BN statistics over 16
batches writes 10 samples per class as DIR/samples/<class>/<k>.png, the layout of
`hamgan sample --per-class 10`, for scripts/band_stat.py. fp32 throughout.

--init CKPT starts G, D and the EMA G from a hamgan checkpoint's G and D (read with
torch.jit.load; the module names are hamgan's) instead of the orthogonal draw: the same initial
weights run through this independent code, with its own data order, latents and bases.
"""
import argparse
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
from sagan_ref import Attention, CondBN, Discriminator, Generator, sn_conv  # noqa: E402

EPS = 1e-6


def read_packed(path):
    """hamgan's packed file (gan/data/packed.h): header, uint8 CHW pixels, int32 labels."""
    with open(path, "rb") as f:
        b = f.read()
    if b[:8] != b"HGANPACK":
        sys.exit(f"{path}: not a packed file (no HGANPACK magic)")
    hb, = struct.unpack_from("<I", b, 12)
    count, = struct.unpack_from("<q", b, 16)
    ch, res, classes = struct.unpack_from("<iii", b, 24)
    n = count * ch * res * res
    pix = np.frombuffer(b, np.uint8, n, hb).reshape(count, ch, res, res)
    lab_off = hb + (n + 7) // 8 * 8
    labels = np.frombuffer(b, np.int32, count, lab_off).astype(np.int64)
    return torch.from_numpy(pix.copy()), torch.from_numpy(labels), classes


class NMFHamburger(nn.Module):
    """y = x + sigma * N(W_u (D C)), D C the NMF of relu(W_l x) (d x HW) from random bases:
    C0 = softmax_r(D^T X) (App. F), K multiplicative updates of C then D (Alg. 2), a last
    update of C, gradients through that last update only (one-step gradient, Sec. 2.3)."""

    def __init__(self, ch, d, r, steps, cond_classes):
        super().__init__()
        self.d, self.r, self.steps = d, r, steps
        self.lower = sn_conv(ch, d, 1, bias=False)
        self.upper = sn_conv(d, ch, 1, bias=False)
        self.norm = CondBN(ch, "labels", cond_classes) if cond_classes else None
        self.sigma = nn.Parameter(torch.tensor(0.0))

    @staticmethod
    def update_c(X, D, C):
        Dt = D.transpose(1, 2)
        return C * (Dt @ X) / (Dt @ D @ C + EPS)

    def forward(self, x, c=None):
        B, _, H, W = x.shape
        X = F.relu(self.lower(x)).reshape(B, self.d, H * W)
        with torch.no_grad():
            D = torch.rand(B, self.d, self.r)
            C = F.softmax(D.transpose(1, 2) @ X, dim=1)
            for _ in range(self.steps):
                C = self.update_c(X, D, C)
                Ct = C.transpose(1, 2)
                D = D * (X @ Ct) / (D @ C @ Ct + EPS)
        y = self.upper((D @ self.update_c(X, D, C)).reshape(B, self.d, H, W))
        if self.norm is not None:
            y = self.norm(y, c)
        return x + self.sigma * y


def context_maker(kind, d, r, steps=6):
    def make(_, ch, h, w, cond_kind, cond_dim):
        if kind == "self_attention":
            return Attention(ch)
        return NMFHamburger(ch, d, r, steps, cond_dim if cond_kind == "labels" else 0)
    return make


def ortho_init(module):
    """BigGAN-PyTorch's init_weights('ortho'): Conv2d, Linear and Embedding weights."""
    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear, nn.Embedding)):
            w = m.weight_orig if hasattr(m, "weight_orig") else m.weight
            nn.init.orthogonal_(w)


@torch.no_grad()
def ema_update(ema, g, decay):
    for pe, p in zip(ema.parameters(), g.parameters()):
        pe.copy_(p) if decay == 0 else pe.lerp_(p, 1 - decay)
    for be, b in zip(ema.buffers(), g.buffers()):
        be.copy_(b)


@torch.no_grad()
def standing_stats(g, n_classes, z_dim, batch, batches, gen):
    """BigGAN-PyTorch's accumulate_standing_stats: BN statistics averaged over `batches`."""
    g.train()
    for m in g.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative average
    for _ in range(batches):
        g(torch.randn(batch, z_dim, generator=gen), torch.randint(n_classes, (batch,), generator=gen))
    g.eval()


def load_hamgan(module, ckpt, prefix):
    """module's parameters and buffers from a hamgan checkpoint's `prefix` (g or d), by name."""
    archive = torch.jit.load(ckpt, map_location="cpu")
    src = {k[len(prefix) + 1:]: v for k, v in list(archive.named_parameters()) + list(archive.named_buffers())
           if k.startswith(prefix + ".")}
    own = module.state_dict()
    missing = sorted(set(own) - set(src))
    if missing:
        sys.exit(f"{ckpt}: no {prefix}.{missing[0]} (and {len(missing) - 1} more) for this model")
    with torch.no_grad():
        for k, v in own.items():
            if src[k].numel() != v.numel():
                sys.exit(f"{ckpt}: {prefix}.{k} has {tuple(src[k].shape)}, this model {tuple(v.shape)}")
            v.copy_(src[k].reshape(v.shape))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--context", default="ham_nmf", choices=["ham_nmf", "self_attention"])
    ap.add_argument("--iterations", type=int, default=150)
    ap.add_argument("--ch", type=int, default=16)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--init", help="a hamgan checkpoint whose G and D to start from")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    pix, labels, n_classes = read_packed(a.data)
    res = pix.shape[-1]
    z_dim = 128
    G = Generator(res, a.ch, n_classes, z_dim, 3, context=a.context, context_res=32,
                  make_context=context_maker(a.context, 256, 32))
    D = Discriminator(res, a.ch, n_classes, 3, context=a.context, context_res=32,
                      make_context=context_maker(a.context, 128, 16), sc_pool_first=True)
    G_ema = Generator(res, a.ch, n_classes, z_dim, 3, context=a.context, context_res=32,
                      make_context=context_maker(a.context, 256, 32))
    ortho_init(G)
    ortho_init(D)
    if a.init:
        load_hamgan(G, a.init, "g")
        load_hamgan(D, a.init, "d")
    G_ema.load_state_dict(G.state_dict())
    opt_g = torch.optim.Adam(G.parameters(), 1e-4, betas=(0.0, 0.999), eps=1e-8)
    opt_d = torch.optim.Adam(D.parameters(), 4e-4, betas=(0.0, 0.999), eps=1e-8)
    gen = torch.Generator().manual_seed(a.seed + 1)
    n = pix.shape[0]
    perm, pos = torch.randperm(n, generator=gen), 0
    for it in range(1, a.iterations + 1):
        if pos + a.batch > n:
            perm, pos = torch.randperm(n, generator=gen), 0
        idx = perm[pos:pos + a.batch]
        pos += a.batch
        x = pix[idx].float() / 127.5 - 1
        flip = torch.rand(a.batch, generator=gen) < 0.5
        x = torch.where(flip.view(-1, 1, 1, 1), x.flip(3), x)
        y = labels[idx]
        # D step: hinge loss on reals and on a detached fake batch.
        z, yf = torch.randn(a.batch, z_dim, generator=gen), torch.randint(n_classes, (a.batch,), generator=gen)
        with torch.no_grad():
            fake = G(z, yf)
        loss_d = F.relu(1 - D(x, y)).mean() + F.relu(1 + D(fake, yf)).mean()
        opt_d.zero_grad(set_to_none=True)
        loss_d.backward()
        opt_d.step()
        # G step on a fresh batch of latents.
        z, yf = torch.randn(a.batch, z_dim, generator=gen), torch.randint(n_classes, (a.batch,), generator=gen)
        loss_g = -D(G(z, yf), yf).mean()
        opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        opt_g.step()
        decay = 0.0 if it < 50 else min(0.9999, 0.5 ** (1.0 / (0.05 * (it - 50 + 1))))
        ema_update(G_ema, G, decay)
        if it % 10 == 0 or it == a.iterations:
            print(f"it {it} D {loss_d.item():.4f} G {loss_g.item():.4f}", flush=True)
    standing_stats(G_ema, n_classes, z_dim, a.batch, 16, gen)
    with torch.no_grad():
        for cls in range(n_classes):
            d = os.path.join(a.out, "samples", f"{cls:04d}")
            os.makedirs(d, exist_ok=True)
            ims = G_ema(torch.randn(10, z_dim, generator=gen), torch.full((10,), cls, dtype=torch.long))
            ims = ((ims + 1) * 127.5).round().clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).numpy()
            for k, im in enumerate(ims):
                Image.fromarray(im).save(os.path.join(d, f"{k}.png"))
    print(f"wrote {n_classes * 10} samples to {os.path.join(a.out, 'samples')}")


if __name__ == "__main__":
    main()
