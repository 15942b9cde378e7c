#!/usr/bin/python3
"""Plain PyTorch training step of hamgan's SAGAN-32 model, for comparison with `hamgan bench
train`: eager or torch.compile, fp32 or bf16 autocast, contiguous or channels-last, so PyTorch
runs under the same precision and layout policy as hamgan. Same architecture as gan/models +
layers/ (ch 32, z 128, 10 classes, 1 channel, orthogonal init, SN eps 1e-6), same step (n_dis 1,
hinge, Adam(0, 0.999), G lr 1e-4, D lr 4e-4, real+fake through D as one batch, EMA copy before
ema_start), synthetic data. G, D and their blocks come from the test oracle
tests/oracle/sagan_ref.py.

--amp auto (default) turns bf16 autocast on as hamgan's train.amp auto does on the CPU: when the
first `flags` line of /proc/cpuinfo lists avx512_bf16 or amx_bf16, unless HAMGAN_CPU_ISA (avx2,
avx512, avx512_bf16, native) lowers the class below avx512_bf16. As in hamgan, the forward passes
run under autocast, the losses and backward outside, the Hamburger's decomposition in fp32.
--compile wraps G and D in torch.compile (torch >= 2); the warm-up steps absorb compilation.

  /usr/bin/python3 scripts/bench_torch_eager.py --threads 2 --context none,self_attention,ham_nmf
  ~/.cache/hamgan/torch2-venv/bin/python scripts/bench_torch_eager.py --amp auto --channels-last --compile

The matching hamgan runs, eager and compile side by side with a table:
  scripts/bench_train_vs_torch.sh
"""
import argparse
import copy
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# G, D and their blocks: the test oracle's independent reference (tests/oracle/sagan_ref.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
from sagan_ref import Attention, CondBN, Discriminator, Generator, sn_conv  # noqa: E402


class HamNMF(nn.Module):  # layers/context/hamburger.cpp + nmf.cpp: d = C, r = d/8, K = 6, one-step
    def __init__(self, c, n_classes=None, steps=6):
        super().__init__()
        self.d, self.r, self.steps = c, c // 8, steps
        self.lower, self.upper = sn_conv(c, c, 1, bias=False), sn_conv(c, c, 1, bias=False)
        self.norm = CondBN(c, "labels", n_classes) if n_classes else None
        self.sigma = nn.Parameter(torch.zeros(()))

    @staticmethod
    def update_coef(x, bases, coef):  # Alg. 2: C <- C * (D^T X) / (D^T D C)
        bt = bases.transpose(1, 2)
        return coef * torch.bmm(bt, x) / (torch.bmm(torch.bmm(bt, bases), coef) + 1e-6)

    def forward(self, x, y=None):
        b, c, h, w = x.shape
        hid = self.lower(x)
        with torch.autocast("cpu", enabled=False):  # the decomposition in fp32 (as hamgan)
            X = F.relu(hid.float()).reshape(b, self.d, h * w)
            bases = torch.rand(b, self.d, self.r)
            with torch.no_grad():
                coef = torch.softmax(torch.bmm(bases.transpose(1, 2), X), 1)
                for _ in range(self.steps):
                    coef = self.update_coef(X, bases, coef)
                    ct = coef.transpose(1, 2)
                    bases = bases * torch.bmm(X, ct) / (torch.bmm(bases, torch.bmm(coef, ct)) + 1e-6)
            coef = self.update_coef(X, bases, coef)
            rec = torch.bmm(bases, coef).view(b, c, h, w)
        out = self.upper(rec)
        if self.norm is not None:
            out = self.norm(out, y)
        return x + self.sigma * out


def make_context(kind, c, h, w, cond_kind, cond_dim):  # sagan_ref's make_context signature
    if kind == "self_attention":
        return Attention(c)
    if kind == "ham_nmf":
        return HamNMF(c, cond_dim if cond_kind == "labels" else None)
    raise ValueError(kind)


def hamgan_init_(model):
    """hamgan's initialization: orthogonal SN conv/linear weights, zero CBN gains and biases
    (D's SN class embedding keeps its N(0, 1) default)."""
    for m in model.modules():
        if isinstance(m, CondBN):
            nn.init.zeros_(m.gain.weight)
            nn.init.zeros_(m.bias.weight)
        elif isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.orthogonal_(m.weight_orig)
    return model


def models(ch, ctx, z_dim=128, n_classes=10):
    """gan/models at resolution 32, 1 channel: G's context after block 2 (32x32), D's at
    16x16 after block 0, D's shortcuts pooled before their 1x1 conv (layers/dblock.cpp)."""
    ctx = None if ctx == "none" else ctx
    g = Generator(32, ch, n_classes, z_dim, 1, context=ctx, context_res=32, make_context=make_context)
    d = Discriminator(32, ch, n_classes, 1, context=ctx, context_res=16, make_context=make_context,
                      sc_pool_first=True)
    return hamgan_init_(g), hamgan_init_(d)


ISA_CLASSES = ("other", "avx2", "avx512", "avx512_bf16")  # ordered, as core/cpu_features.h


def cpu_hardware_isa():  # core/cpu_features.cpp cpuinfo_isa: the first flags line speaks for all
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    fl = set(line.partition(":")[2].split())
                    if "avx512_bf16" in fl or "amx_bf16" in fl:
                        return "avx512_bf16"
                    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= fl:
                        return "avx512"
                    if {"avx2", "fma"} <= fl:
                        return "avx2"
                    return "other"
    except OSError:
        pass
    return "other"


def amp_auto():
    """hamgan's train.amp auto on the CPU: native bf16, after HAMGAN_CPU_ISA's cap."""
    hw = cpu_hardware_isa()
    v = os.environ.get("HAMGAN_CPU_ISA", "")
    isa = hw
    if v and v != "native":
        if v not in ISA_CLASSES[1:]:
            raise SystemExit(f"HAMGAN_CPU_ISA='{v}': expected avx2, avx512, avx512_bf16 or native")
        if ISA_CLASSES.index(v) > ISA_CLASSES.index(hw):
            raise SystemExit(f"HAMGAN_CPU_ISA={v}: this CPU has only {hw}; the variable can lower "
                             "the instruction set hamgan assumes, not raise it")
        isa = v
    return isa == "avx512_bf16"


def bench(ctx, args):
    torch.manual_seed(0)
    g, d = models(args.ch, ctx)
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format
    g, d = g.to(memory_format=fmt), d.to(memory_format=fmt)
    g_ema = copy.deepcopy(g).eval()
    for p in g_ema.parameters():
        p.requires_grad_(False)
    opt_g = torch.optim.Adam(g.parameters(), 1e-4, betas=(0.0, 0.999), eps=1e-8)
    opt_d = torch.optim.Adam(d.parameters(), 4e-4, betas=(0.0, 0.999), eps=1e-8)
    params_d = list(d.parameters())
    if args.compile:
        # Static shapes: D sees 2n images in its step and n in G's, two graphs compiled in the
        # first warm-up step rather than one dynamic-shape graph after a recompilation.
        g, d = torch.compile(g, dynamic=False), torch.compile(d, dynamic=False)
    n = args.batch
    images = (torch.rand(1024, 1, 32, 32) * 2 - 1).contiguous(memory_format=fmt)
    labels = torch.randint(10, (1024,))
    pos = [0]

    def autocast():
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.amp)

    def step():
        i = pos[0]
        pos[0] = (i + n) % (1024 - n)
        x, y = images[i:i + n], labels[i:i + n]
        opt_d.zero_grad()
        z, yf = torch.randn(n, 128), torch.randint(10, (n,))
        with autocast():  # forward under autocast, losses and backward in fp32 (as hamgan)
            if args.reuse_fake:  # G's graph kept for its step (train.reuse_fake)
                kept = fake = g(z, yf)
                fake = fake.detach()
            else:
                with torch.no_grad():
                    fake = g(z, yf)
            out = d(torch.cat([x, fake.to(x.dtype)]), torch.cat([y, yf]))
        out = out.float()
        (F.relu(1 - out[:n]).mean() + F.relu(1 + out[n:]).mean()).backward()
        opt_d.step()
        for p in params_d:
            p.requires_grad_(False)
        opt_g.zero_grad()
        if not args.reuse_fake:
            z, yf = torch.randn(n, 128), torch.randint(10, (n,))
        with autocast():
            out = d(kept if args.reuse_fake else g(z, yf), yf)
        (-out.float().mean()).backward()
        opt_g.step()
        for p in params_d:
            p.requires_grad_(True)
        with torch.no_grad():  # EMA before ema_start: a copy of G
            for a, b in zip(g_ema.parameters(), g.parameters()):
                a.copy_(b)
            for a, b in zip(g_ema.buffers(), g.buffers()):
                a.copy_(b)

    mode = "{} {}{} {} {} {:15s} batch {}, {} threads".format(
        torch.__version__.split("+")[0], "compile" if args.compile else "eager",
        " reuse-fake" if args.reuse_fake else "",
        "bf16" if args.amp else "fp32", "channels-last" if args.channels_last else "contiguous",
        ctx, n, torch.get_num_threads())
    for w in range(args.warmup):
        t0 = time.perf_counter()
        step()
        if w == 0:
            print(f"torch {mode}: first warm-up step {time.perf_counter() - t0:.2f} s"
                  + (" (with compilation)" if args.compile else ""), flush=True)
    ms = []
    for _ in range(args.iters):
        t0 = time.perf_counter()
        step()
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    med = ms[len(ms) // 2]
    print(f"torch {mode}: median {med:.2f} ms/iteration (min {ms[0]:.2f}, max {ms[-1]:.2f}), "
          f"{n * 1000.0 / med:.1f} images/s", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--context", default="none,self_attention,ham_nmf")
    p.add_argument("--ch", type=int, default=32)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--amp", choices=("auto", "true", "false"), default="auto",
                   help="bf16 autocast of the forward passes; auto: on with native bf16 (as hamgan)")
    p.add_argument("--channels-last", action="store_true", help="models and images channels-last")
    p.add_argument("--compile", action="store_true", help="torch.compile G and D (torch >= 2)")
    p.add_argument("--reuse-fake", action="store_true",
                   help="G's step reuses the D step's fakes (hamgan's train.reuse_fake)")
    args = p.parse_args()
    if args.compile:
        if int(torch.__version__.split(".")[0]) < 2:
            p.error(f"--compile needs torch >= 2 (torch.compile); {torch.__file__} is torch "
                    f"{torch.__version__}: run this script with a torch 2 Python, e.g. "
                    "~/.cache/hamgan/torch2-venv/bin/python")
        if args.warmup < 1:
            p.error("--compile: expected --warmup >= 1 (the first step compiles)")
    if args.iters < 1:
        p.error("--iters: expected >= 1")
    args.amp = amp_auto() if args.amp == "auto" else args.amp == "true"
    torch.set_num_threads(args.threads)
    for ctx in args.context.split(","):
        bench(ctx, args)


if __name__ == "__main__":
    main()
