#!/usr/bin/python3
"""Plain PyTorch training step of hamgan's SAGAN/BigGAN models, for comparison with `hamgan bench
train`: eager or torch.compile, fp32 or bf16 autocast, contiguous or channels-last, CPU or CUDA, so
PyTorch runs under the same precision and layout policy as hamgan. Same architecture as gan/models
+ layers/ (by default SAGAN-32: ch 32, z 128, 10 classes, 1 channel; with --config the
architecture of a hamgan config), orthogonal init, SN eps 1e-6, same step (n_dis 1, hinge,
Adam(0, 0.999), G lr 1e-4, D lr 4e-4, real+fake through D as one batch, EMA copy before
ema_start), synthetic data. G, D and their blocks come from the test oracle
tests/oracle/sagan_ref.py.

--amp auto (default) turns bf16 autocast on as hamgan's train.amp auto does: on CUDA from compute
capability 8; on the CPU when the first `flags` line of /proc/cpuinfo lists avx512_bf16 or
amx_bf16, unless HAMGAN_CPU_ISA (avx2, avx512, avx512_bf16, native) lowers the class below
avx512_bf16. As in hamgan, the forward passes run under autocast, the losses and backward
outside, the Hamburger's decomposition in fp32.
--compile wraps G and D in torch.compile (torch >= 2); the warm-up steps absorb compilation.
--tf32 auto (default) puts CUDA's fp32 matrix products (the decomposition's) in TF32 when
autocast is on, as hamgan's train.tf32 auto does.
--device cuda: fused Adam and cudnn.benchmark (PyTorch's fast settings); the step time is the
wall time of the timed steps over their count (one synchronisation at the end, as `hamgan bench
train`), with the device time per step from CUDA events beside the host's enqueue time.
--config CFG: G and D as hamgan builds them for CFG (resolution, channels, classes, context
types, resolutions and Hamburger d, r, K), read from `hamgan info -c CFG --get SECTION --json`.
--json: one JSON line on stdout (images_per_s, ms_per_iteration, device_median_ms,
host_median_ms, peak_mib, bound: device, host, undetermined or cpu, params_g, params_d); the text
lines go to stderr.

  /usr/bin/python3 scripts/bench_torch_eager.py --threads 2 --context none,self_attention,ham_nmf
  ~/.cache/hamgan/torch2-venv/bin/python scripts/bench_torch_eager.py --amp auto --channels-last --compile
  python3 scripts/bench_torch_eager.py --config configs/imagenet128_hamgan.yaml --hamgan build-gpu/hamgan \
      --device cuda --batch 256 --amp true --channels-last --json

The matching hamgan runs, eager and compile side by side with a table:
  scripts/bench_train_vs_torch.sh
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# G, D and their blocks: the test oracle's independent reference (tests/oracle/sagan_ref.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
from sagan_ref import Attention, CondBN, Discriminator, Generator, sn_conv  # noqa: E402


class HamNMF(nn.Module):  # layers/context/hamburger.cpp + nmf.cpp: C -> d -> C, r = d/8, K steps, one-step
    def __init__(self, c, n_classes=None, steps=6, d=0, r=0):
        super().__init__()
        self.d = d or c
        self.r, self.steps = r or self.d // 8, steps
        self.lower, self.upper = sn_conv(c, self.d, 1, bias=False), sn_conv(self.d, c, 1, bias=False)
        self.norm = CondBN(c, "labels", n_classes) if n_classes else None
        self.sigma = nn.Parameter(torch.zeros(()))

    @staticmethod
    def update_coef(x, bases, coef):  # Alg. 2: C <- C * (D^T X) / (D^T D C)
        bt = bases.transpose(1, 2)
        return coef * torch.bmm(bt, x) / (torch.bmm(torch.bmm(bt, bases), coef) + 1e-6)

    def forward(self, x, y=None):
        b, c, h, w = x.shape
        hid = self.lower(x)
        with torch.autocast(x.device.type, enabled=False):  # the decomposition in fp32 (as hamgan)
            X = F.relu(hid.float()).reshape(b, self.d, h * w)
            bases = torch.rand(b, self.d, self.r, device=x.device)
            with torch.no_grad():
                coef = torch.softmax(torch.bmm(bases.transpose(1, 2), X), 1)
                for _ in range(self.steps):
                    coef = self.update_coef(X, bases, coef)
                    ct = coef.transpose(1, 2)
                    bases = bases * torch.bmm(X, ct) / (torch.bmm(bases, torch.bmm(coef, ct)) + 1e-6)
            coef = self.update_coef(X, bases, coef)
            rec = torch.bmm(bases, coef).view(b, self.d, h, w)
        out = self.upper(rec)
        if self.norm is not None:
            out = self.norm(out, y)
        return x + self.sigma * out


def context_maker(ham):
    """sagan_ref's make_context for one side; ham: the Hamburger's d, r and K (0: its defaults)."""
    def make_context(kind, c, h, w, cond_kind, cond_dim):
        if kind == "self_attention":
            return Attention(c)
        if kind == "ham_nmf":
            return HamNMF(c, cond_dim if cond_kind == "labels" else None, ham.get("steps", 6),
                          ham.get("d", 0), ham.get("r", 0))
        raise ValueError(kind)
    return make_context


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


# SAGAN-32 as gan/models builds it for configs/fmnist32_*.yaml: G's context after block 2
# (32x32), D's at 16x16 after block 0.
DEFAULT_ARCH = dict(resolution=32, image_channels=1, n_classes=10, g_ch=32, d_ch=32, z_dim=128,
                    shared_dim=0, hier=False, sn_eps=1e-6, bn_eps=1e-5,
                    g_context=None, d_context=None, g_context_res=32, d_context_res=16,
                    g_ham={}, d_ham={})


def models(arch):
    """gan/models for arch, D's shortcuts pooled before their 1x1 conv (layers/dblock.cpp)."""
    a = arch
    g = Generator(a["resolution"], a["g_ch"], a["n_classes"], a["z_dim"], a["image_channels"],
                  shared_dim=a["shared_dim"], hier=a["hier"], context=a["g_context"],
                  context_res=a["g_context_res"], bn_eps=a["bn_eps"], sn_eps=a["sn_eps"],
                  make_context=context_maker(a["g_ham"]))
    d = Discriminator(a["resolution"], a["d_ch"], a["n_classes"], a["image_channels"],
                      context=a["d_context"], context_res=a["d_context_res"], sn_eps=a["sn_eps"],
                      make_context=context_maker(a["d_ham"]), sc_pool_first=True)
    return hamgan_init_(g), hamgan_init_(d)


def resolved_config(hamgan, cfg):
    """The sections of hamgan's resolved config that the model needs, each from
    `hamgan info -c CFG --get SECTION --json`, as {"section.key": "value"} (values as strings)."""
    flat = {}

    def walk(prefix, node):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(f"{prefix}.{k}", v)
        else:
            flat[prefix] = node

    for section in ("model", "generator", "discriminator", "train"):
        cmd = [hamgan, "info", "-c", cfg, "--get", section, "--json"]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise SystemExit(f"--hamgan {hamgan}: cannot run it to resolve --config {cfg} ({e})")
        if run.returncode != 0:
            raise SystemExit(f"--config {cfg}: `{' '.join(cmd)}` failed: "
                             + (run.stderr.strip().splitlines() or [f"exit {run.returncode}"])[-1])
        walk(section, json.loads(run.stdout))
    return flat


def arch_from_config(hamgan, cfg):
    """DEFAULT_ARCH's keys from hamgan's resolved config; what the oracle does not model is an
    error naming the key, rather than a different model timed under the config's name."""
    c = resolved_config(hamgan, cfg)

    def get(key):
        if key not in c:
            raise SystemExit(f"--config {cfg}: no '{key}' in `hamgan info`'s resolved config")
        return c[key]

    def need(key, expected):
        if get(key) != expected:
            raise SystemExit(f"--config {cfg}: {key} is '{get(key)}', this script models only '{expected}'")

    need("model.init", "orthogonal")
    need("train.n_dis", "1")
    need("train.loss", "hinge")
    a = dict(resolution=int(get("model.resolution")), image_channels=int(get("model.image_channels")),
             n_classes=int(get("model.n_classes")), g_ch=int(get("generator.ch")),
             d_ch=int(get("discriminator.ch")), z_dim=int(get("generator.z_dim")),
             shared_dim=int(get("generator.shared_dim")), hier=get("generator.hier") == "true",
             sn_eps=float(get("model.sn_eps")), bn_eps=float(get("model.bn_eps")))
    for side, key in (("g", "generator"), ("d", "discriminator")):
        kind = get(f"{key}.context.type")
        if kind not in ("none", "self_attention", "ham_nmf"):
            raise SystemExit(f"--config {cfg}: {key}.context.type is '{kind}'; this script models "
                             "none, self_attention and ham_nmf")
        a[f"{side}_context"] = None if kind == "none" else kind
        a[f"{side}_context_res"] = int(c.get(f"{key}.context.resolution", 0))
        a[f"{side}_ham"] = {}
        if kind == "ham_nmf":
            for k, v in (("groups", "1"), ("grad", "one_step"), ("init", "random"), ("inv_t", "1"),
                         ("normalize_bases", "false")):
                need(f"{key}.context.{k}", v)
            a[f"{side}_ham"] = {k: int(get(f"{key}.context.{k}")) for k in ("d", "r", "steps")}
    return a


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


def amp_default(device):
    """hamgan's train.amp auto (gan/train/amp.cpp): on CUDA from compute capability 8."""
    if device.type == "cuda":
        return torch.cuda.get_device_capability(device)[0] >= 8
    return amp_auto()


def count(model):
    return sum(p.numel() for p in model.parameters())


def bench(arch, label, args):
    dev = torch.device(args.device)
    cuda = dev.type == "cuda"
    torch.manual_seed(0)
    g, d = models(arch)
    params_g, params_d = count(g), count(d)
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format
    g, d = g.to(dev, memory_format=fmt), d.to(dev, memory_format=fmt)
    g_ema = copy.deepcopy(g).eval()
    for p in g_ema.parameters():
        p.requires_grad_(False)
    # On CUDA PyTorch's fastest Adam (one fused kernel over all parameters, torch >= 2); the CPU
    # keeps the default.
    fused = {"fused": True} if cuda and int(torch.__version__.split(".")[0]) >= 2 else {}
    opt_g = torch.optim.Adam(g.parameters(), 1e-4, betas=(0.0, 0.999), eps=1e-8, **fused)
    opt_d = torch.optim.Adam(d.parameters(), 4e-4, betas=(0.0, 0.999), eps=1e-8, **fused)
    params_d_list = list(d.parameters())
    if args.compile:
        # Static shapes: D sees 2n images in its step and n in G's, two graphs compiled in the
        # first warm-up step rather than one dynamic-shape graph after a recompilation.
        g, d = torch.compile(g, dynamic=False), torch.compile(d, dynamic=False)
    n, res, nc, zd = args.batch, arch["resolution"], arch["n_classes"], arch["z_dim"]
    pool = 1024 if res <= 32 else max(64, 4 * n)  # distinct batches, without 200 MB at 128 px
    if pool <= n:
        pool = 4 * n
    images = (torch.rand(pool, arch["image_channels"], res, res, device=dev) * 2 - 1).contiguous(memory_format=fmt)
    labels = torch.randint(nc, (pool,), device=dev)
    pos = [0]

    def autocast():
        return torch.autocast(dev.type, dtype=torch.bfloat16, enabled=args.amp)

    def step():
        i = pos[0]
        pos[0] = (i + n) % (pool - n)
        x, y = images[i:i + n], labels[i:i + n]
        opt_d.zero_grad()
        z, yf = torch.randn(n, zd, device=dev), torch.randint(nc, (n,), device=dev)
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
        for p in params_d_list:
            p.requires_grad_(False)
        opt_g.zero_grad()
        if not args.reuse_fake:
            z, yf = torch.randn(n, zd, device=dev), torch.randint(nc, (n,), device=dev)
        with autocast():
            out = d(kept if args.reuse_fake else g(z, yf), yf)
        (-out.float().mean()).backward()
        opt_g.step()
        for p in params_d_list:
            p.requires_grad_(True)
        with torch.no_grad():  # EMA before ema_start: a copy of G
            for a, b in zip(g_ema.parameters(), g.parameters()):
                a.copy_(b)
            for a, b in zip(g_ema.buffers(), g.buffers()):
                a.copy_(b)

    mode = "{} {}{} {} {} {:15s} batch {}, {} threads".format(
        torch.__version__.split("+")[0], "compile" if args.compile else "eager",
        " reuse-fake" if args.reuse_fake else "",
        "bf16" + (" tf32" if args.tf32 else "") if args.amp else "fp32",
        "channels-last" if args.channels_last else "contiguous",
        label, n, torch.get_num_threads())
    if cuda or res != 32:
        mode += f", {dev.type} {res} px"
    log = sys.stderr if args.json else sys.stdout
    for w in range(args.warmup):
        t0 = time.perf_counter()
        step()
        if cuda:
            torch.cuda.synchronize(dev)
        if w == 0:
            print(f"torch {mode}: first warm-up step {time.perf_counter() - t0:.2f} s"
                  + (" (with compilation)" if args.compile else ""), file=log, flush=True)
    result = dict(script="bench_torch_eager", torch=torch.__version__, device=str(dev), config=args.config,
                  context=label, resolution=res, batch=n, amp=args.amp, tf32=args.tf32, channels_last=args.channels_last,
                  compile=args.compile, fused_adam=bool(fused), iters=args.iters, warmup=args.warmup, params_g=params_g,
                  params_d=params_d, device_median_ms=None, host_median_ms=None, peak_mib=None, bound="cpu")
    if cuda:
        # As `hamgan bench train`: steps enqueued back to back, one synchronisation at the end;
        # events between the steps give the device time per step, the host's enqueue time beside it.
        torch.cuda.reset_peak_memory_stats(dev)
        events = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters + 1)]
        host = []
        start = time.perf_counter()
        events[0].record()
        for i in range(args.iters):
            t0 = time.perf_counter()
            step()
            host.append((time.perf_counter() - t0) * 1e3)
            events[i + 1].record()
        torch.cuda.synchronize(dev)
        wall = (time.perf_counter() - start) * 1e3 / args.iters
        dev_ms = sorted(events[i].elapsed_time(events[i + 1]) for i in range(args.iters))
        host.sort()
        dmed, hmed = dev_ms[len(dev_ms) // 2], host[len(host) // 2]
        peak = torch.cuda.max_memory_allocated(dev) / 2**20
        bound, verdict = step_bound(hmed, dmed)
        result.update(ms_per_iteration=wall, images_per_s=n * 1000.0 / wall, device_median_ms=dmed,
                      host_median_ms=hmed, peak_mib=peak, bound=bound)
        print(f"torch {mode}: {wall:.2f} ms/iteration; per step: device median {dmed:.2f} ms, host "
              f"{hmed:.2f} ms to enqueue: {verdict}; peak {peak:.0f} MiB allocated, "
              f"{n * 1000.0 / wall:.1f} images/s", file=log, flush=True)
    else:
        ms = []
        for _ in range(args.iters):
            t0 = time.perf_counter()
            step()
            ms.append((time.perf_counter() - t0) * 1e3)
        ms.sort()
        med = ms[len(ms) // 2]
        result.update(ms_per_iteration=med, images_per_s=n * 1000.0 / med, device_median_ms=med)
        print(f"torch {mode}: median {med:.2f} ms/iteration (min {ms[0]:.2f}, max {ms[-1]:.2f}), "
              f"{n * 1000.0 / med:.1f} images/s", file=log, flush=True)
    if args.json:
        print(json.dumps(result), flush=True)


def step_bound(host_ms, device_ms):
    """(word, verdict) by `hamgan bench train`'s rule (gan/bench/train_bench.h step_bound, unprofiled):
    the times tell only when one is under 90% of the other; when they agree the host may have
    blocked on the device's full launch queue or the device waited on the host."""
    if host_ms < 0.9 * device_ms:
        return "device", "device-bound"
    if device_ms < 0.9 * host_ms:
        return "host", "host-bound (the device waits for the host)"
    return "undetermined", ("host and device agree: the host waited on the device's full launch queue, "
                            "or the device on the host; a profile tells which")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--context", default=None,
                   help="context modules of G and D, one run each (default none,self_attention,ham_nmf; "
                        "with --config: the config's)")
    p.add_argument("--ch", type=int, default=None, help="G's and D's ch (default 32; with --config: the config's)")
    p.add_argument("--config", default=None,
                   help="a hamgan config: G and D as hamgan builds them for it (see --hamgan)")
    p.add_argument("--hamgan", default="build/hamgan", help="the hamgan binary that resolves --config")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--amp", choices=("auto", "true", "false"), default="auto",
                   help="bf16 autocast of the forward passes; auto: on with native bf16 (as hamgan)")
    p.add_argument("--tf32", choices=("auto", "true", "false"), default="auto",
                   help="CUDA: fp32 matrix products in TF32; auto: with autocast (as hamgan's train.tf32)")
    p.add_argument("--channels-last", action="store_true", help="models and images channels-last")
    p.add_argument("--compile", action="store_true", help="torch.compile G and D (torch >= 2)")
    p.add_argument("--reuse-fake", action="store_true",
                   help="G's step reuses the D step's fakes (hamgan's train.reuse_fake)")
    p.add_argument("--json", action="store_true",
                   help="one JSON line per run on stdout; the text lines go to stderr")
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
    if args.batch < 1:
        p.error("--batch: expected >= 1")
    try:
        dev = torch.device(args.device)
    except RuntimeError:
        p.error(f"--device '{args.device}': expected cpu or cuda[:N]")
    if dev.type not in ("cpu", "cuda"):
        p.error(f"--device '{args.device}': expected cpu or cuda[:N]")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            p.error(f"--device {args.device}: this torch ({torch.__version__}, {torch.__file__}) sees no CUDA device")
        torch.backends.cudnn.benchmark = True  # PyTorch's fastest convolutions for fixed shapes
    if args.config and (args.context or args.ch):
        p.error("--context, --ch: the architecture comes from --config; give one or the other")
    args.amp = amp_default(dev) if args.amp == "auto" else args.amp == "true"
    # As hamgan's train.tf32: auto is TF32 for CUDA's fp32 matrix products (the decomposition's)
    # when autocast is on.
    args.tf32 = dev.type == "cuda" and (args.amp if args.tf32 == "auto" else args.tf32 == "true")
    if dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.set_num_threads(args.threads)
    if args.config:
        arch = arch_from_config(args.hamgan, args.config)
        g_ctx, d_ctx = arch["g_context"] or "none", arch["d_context"] or "none"
        bench(arch, g_ctx if g_ctx == d_ctx else f"{g_ctx}/{d_ctx}", args)
        return
    for ctx in (args.context or "none,self_attention,ham_nmf").split(","):
        arch = dict(DEFAULT_ARCH, g_ch=args.ch or 32, d_ch=args.ch or 32)
        arch["g_context"] = arch["d_context"] = None if ctx == "none" else ctx
        bench(arch, ctx, args)


if __name__ == "__main__":
    main()
