#!/usr/bin/env python3
"""Which part of a trained HamGAN generator draws the border stripes (docs/band/README.md)?

  python scripts/band_probe.py EXPORT_DIR [--n 100] [--seed 0]

EXPORT_DIR is `hamgan export`'s folder (python/hamgan_py loads it; needs torch and safetensors).
For n samples (n/classes per class, `hamgan sample`'s latents and bases) it prints one JSON line:
  - "stripes": scripts/band_stat.py's stripe statistics of the samples as they are;
  - "stripes_without_context": the same with the context module's residual branch removed
    (y = x instead of x + sigma N(W_u D C)), the rest of G unchanged: a band that vanishes here
    is written by the context module;
  - "context_rows", "context_cols": the mean |residual branch| per row and per column of the
    context module's grid (mean over samples and channels), to see where it writes, and
    "context_branch_mean_abs" against "context_input_mean_abs", the features it adds to;
  - "basis_share_rows", "basis_share_cols" (Hamburger): per row / column, the share of positions
    whose largest coefficient belongs to the basis that wins most often in the last quarter of
    that axis (the end band's own basis, if the decomposition gives it one).
"""
import argparse
import json
import os
import sys

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))
sys.path.insert(0, here)
import band_stat  # noqa: E402
from hamgan_py import context as ctx_mod  # noqa: E402
from hamgan_py import load_generator  # noqa: E402
from hamgan_py.sampling import to_uint8  # noqa: E402


def stripes_of(images):
    """band_stat's stripe fields of G's [-1, 1] images as their PNGs would hold them."""
    m = to_uint8(images).double().mean(dim=(0, 1)).numpy()  # mean over samples and channels
    return band_stat.stripes_fields(m, lambda x: round(x, 4))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("export")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    g = load_generator(a.export)
    n_classes = g.n_classes
    per = max(1, a.n // n_classes)
    classes = [c for c in range(n_classes) for _ in range(per)]
    ks = [k for _ in range(n_classes) for k in range(per)]

    ctx = g.context
    record = {}
    coefs = []
    orig_forward = type(ctx).forward

    def probed(self, x, cond, *rest):
        y = orig_forward(self, x, cond, *rest)
        record["branch"] = (y - x).detach()
        record["input"] = x.detach()
        return x if record.get("drop") else y

    type(ctx).forward = probed
    if isinstance(ctx, ctx_mod.Hamburger) and ctx.kind == "ham_nmf":
        orig_solve = ctx_mod.solve_nmf

        def solve(x, bases, steps, inv_t):
            db, coef = orig_solve(x, bases, steps, inv_t)
            coefs.append(coef.detach())
            return db, coef
        ctx_mod.solve_nmf = solve
    out = {"export": a.export, "n": len(classes)}
    with torch.no_grad():
        record["drop"] = False
        imgs = g.sample(a.seed, classes, ks)
        branch = record["branch"].abs().mean(dim=(0, 1))  # H x W at the context's resolution
        out["context_input_mean_abs"] = round(float(record["input"].abs().mean()), 4)
        out["context_branch_mean_abs"] = round(float(record["branch"].abs().mean()), 4)
        out["stripes"] = stripes_of(imgs)
        record["drop"] = True
        out["stripes_without_context"] = stripes_of(g.sample(a.seed, classes, ks))
    r3 = lambda v: [round(float(t), 4) for t in v]
    out["context_rows"], out["context_cols"] = r3(branch.mean(1)), r3(branch.mean(0))
    if coefs:
        c = coefs[0]  # first (kept) pass: B x r x HW
        h = w = branch.shape[0]
        win = c.argmax(1).reshape(-1, h, w)  # B x H x W
        shares = {}
        for axis, name in ((1, "rows"), (2, "cols")):
            band = win.narrow(axis, int(round(0.79 * h)), h - int(round(0.79 * h)))
            top = torch.bincount(band.reshape(-1), minlength=c.shape[1]).argmax()
            shares[name] = r3((win == top).double().mean(dim=(0, 3 - axis)))
        out["basis_share_rows"], out["basis_share_cols"] = shares["rows"], shares["cols"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
