#!/usr/bin/env python3
"""docs/configuration.md from the program itself, and a check that the page lists every key.

Every key and its default come from `hamgan info`, which prints the whole resolved config
(gan/cli/info.cpp): the defaults from a config that sets nothing (`model: {}`), once per
context module type (each type has its own keys), and the values the shipped presets use from
`info -c configs/X.yaml`. Only the one-line meanings and ranges below are written by hand, from
the code that reads each key (gan/config/config.cpp, layers/context/*.cpp parse functions); a key the
binary resolves that has no meaning here stops the generation, so the page cannot miss a key.

  scripts/config_reference.py BINARY [OUT]   write the page (default docs/configuration.md)
  scripts/config_reference.py --check BINARY exit 1 when the keys BINARY resolves (over
                                             configs/*.yaml and every context type) differ from
                                             the keys docs/configuration.md lists

Standard library only: CTest runs it with Debian's /usr/bin/python3.
"""
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "configuration.md")
CONTEXT_SECTIONS = ("generator.context", "discriminator.context")
COMMON_CONTEXT_KEYS = ("type", "resolution")
KEYS_HEADING = "## Keys"
CONTEXT_HEADING = "## Context module keys"

# key -> (range or values, meaning). Ranges are the bounds the reader enforces.
KEYS = {
    "model.resolution": ("32, 64, 128", "image size (square); picks the G and D block tables (gan/config/arch.cpp)"),
    "model.n_classes": ("[1, 1048576]", "classes of the conditional GAN; `train` checks it against the data's class count before it writes anything"),
    "model.image_channels": ("[1, 4]", "channels of the images (1 gray, 3 RGB)"),
    "model.init": ("orthogonal, xavier, normal", "weight initialisation of G and D; `normal` is N(0, 0.02)"),
    "model.sn_eps": ("[0, 1]", "epsilon of spectral normalisation (as `torch.nn.utils.spectral_norm`)"),
    "model.bn_eps": ("[0, 1]", "epsilon of batch norm (G's conditional BN)"),
    "generator.ch": ("[1, 4096]", "width: block channels are multiples of `ch` (G: 16, 16, 8, 4, 2, 1 x ch at 128 px)"),
    "generator.z_dim": ("[1, 65536]", "latent size; with `hier`, a multiple of the number of blocks + 1"),
    "generator.shared_dim": ("[0, 65536]", "0: per-class embeddings in each conditional BN; > 0: BigGAN's shared class embedding of this size"),
    "generator.hier": ("true, false", "BigGAN's hierarchical z: one chunk of z per block plus one for the input; needs `shared_dim` > 0"),
    "discriminator.ch": ("[1, 4096]", "width: block channels are multiples of `ch` (D: 1, 2, 4, 8, 16, 16 x ch at 128 px)"),
    "train.batch_size": ("[1, 1048576]", "images per step and rank (the global batch is this x the ranks)"),
    "train.iterations": ("[0, 2^40]", "the iteration training stops at; a resumed run continues to it, so raising it trains a finished run further"),
    "train.g_lr": ("[0, 1]", "Adam learning rate of G"),
    "train.d_lr": ("[0, 1]", "Adam learning rate of D"),
    "train.beta1": ("[0, 1)", "Adam beta1 of both optimizers"),
    "train.beta2": ("[0, 1)", "Adam beta2 of both optimizers"),
    "train.n_dis": ("[1, 100]", "D steps per G step"),
    "train.loss": ("hinge, nonsaturating", "the GAN loss (gan/train/losses.h)"),
    "train.seed": (">= 0", "seeds the weights, the latents, the data order and the training grid's fixed latents"),
    "train.adam_eps": ("(0, 1]", "Adam epsilon"),
    "train.accumulate": ("[1, 1048576], a divisor of `batch_size`", "micro-batches per step, each of `batch_size / accumulate` images: the same step in less memory"),
    "train.ema": ("true, false", "keep an exponential moving average of G's weights (BigGAN); `sample`, `fid` and the grids use it"),
    "train.ema_decay": ("[0, 1]", "decay of the EMA"),
    "train.ema_start": (">= 0", "iterations before this copy G into the EMA instead of averaging"),
    "train.ema_rampup": ("[0, 1]", "the EMA's half-life is at most this fraction of the updates so far (StyleGAN2-ADA's ramp-up); 0: plain `ema_decay`"),
    "train.ema_standing_batches": ("[0, 100000]", "BigGAN's standing statistics: the EMA G's BN statistics re-estimated over this many batches before it samples or is saved; 0: off"),
    "train.amp": ("auto, true, false", "bf16 autocast of the forward passes; `auto`: on for CUDA GPUs of compute capability >= 8 and CPUs with native bf16 (AVX-512 BF16 or AMX); SN sigma, BN, the losses and the Hamburger's decomposition stay fp32"),
    "train.channels_last": ("true, false", "NHWC weights and images (faster on CPU and CUDA; results equal up to summation order)"),
    "train.cudnn_benchmark": ("true, false", "on CUDA: cuDNN times its convolution algorithms once for each shape and keeps the fastest (the step's shapes are fixed); false: its heuristic choice"),
    "train.folded_convs": ("auto, true, false", "G's upsample + 3x3 conv and D's 3x3 conv + pool as one folded convolution (fewer MACs; results equal up to summation order): auto where measured faster, true everywhere (GPUs and AMX CPUs included), false as written"),
    "train.device": ("cpu, cuda, auto", "where training runs; `auto`: CUDA when a GPU is visible; each rank on a machine gets its own GPU"),
    "train.log_every": (">= 1", "iterations between progress lines and `metrics.jsonl` records"),
    "train.sample_every": (">= 0", "iterations between sample grids in `samples/` (0: none)"),
    "train.checkpoint_every": (">= 0", "iterations between checkpoints (the last iteration always leaves one)"),
    "train.keep_checkpoints": (">= 1", "the newest K checkpoints that verify are kept; older ones are deleted"),
    "train.time_limit_minutes": (">= 0", "0: none; else checkpoint and stop after this many minutes of this invocation"),
    "train.lr_decay": ("none, linear", "`linear`: both learning rates fall to 0 from `lr_decay_from` of the budget (iterations, or the time limit if that ends first) to its end"),
    "train.lr_decay_from": ("[0, 0.999]", "fraction of the budget where the linear decay starts"),
    "train.sync_bn": ("true, false", "data parallel: G's batch statistics over the global batch of all ranks (default: per rank)"),
    "train.reuse_fake": ("true, false; only with `n_dis: 1`", "G's step reuses the D step's fakes (one G forward per iteration; G's activations stay alive through D's step) instead of drawing new ones (BigGAN's step)"),
    "train.diffaug": ("comma list of color, translation, cutout; \"\" none", "DiffAugment's transforms on every image D sees, real and fake"),
    "train.lecam_weight": ("[0, 1000000]", "lambda of the LeCam term in D's loss; 0: off"),
    "train.lecam_decay": ("[0, 0.999999]", "EMA decay of LeCam's anchors"),
    "train.tensorboard": ("true, false", "also write TensorBoard event files (losses, scores, sample grids) to `tensorboard/` of the run, rank 0 only"),
    "train.init_from": ("path; \"\" none", "a checkpoint of another run to start from: G, D and the EMA G by tensor name; class tensors of another `model.n_classes` re-initialised and named in the log; the iteration count starts at 0; a resumed run ignores it"),
    "train.init_optimizer": ("true, false", "with `init_from`: also take both Adam states (step and moments)"),
    "train.freeze_d": ("0 to the number of D's blocks at `model.resolution`", "FreezeD (Mo et al. 2020): D's first K blocks get no updates"),
    "data.format": ("fmnist, cifar10, folder, packed, auto", "the training data's kind; `auto`: detected from what is at `path`"),
    "data.path": ("path", "the training data: a Fashion-MNIST or CIFAR-10 directory, an image folder (one directory per class) or a file of `hamgan prepare`"),
    "eval.every": (">= 0", "score the EMA G every N iterations (and at the end) as `fid --run` would, into `scores.csv`; 0: off"),
    "eval.n": ("[2, 1000000]", "samples, and real images of the reference, per score"),
    "eval.features": ("path", "a domain classifier (`hamgan classifier train`) to score in; \"\": Inception"),
    "eval.real": ("path", "the reference (.npz, image directory or data source); \"\": `data.path`"),
    "eval.metrics": ("comma list as `fid --metrics`", "what each score computes"),
    "eval.best_metric": ("fid, kid, ifid, class_acc, precision, recall, density, coverage", "ranks the kept best checkpoints (fid, kid, ifid: lower is better; the rest higher)"),
    "eval.keep_best": ("[1, 1000]", "best checkpoints kept as `checkpoints/best_ckpt_<iteration>.pt`, never pruned by `keep_checkpoints`"),
    "eval.inception": ("path", "pytorch-fid's Inception weights; \"\": `--inception` or `$HAMGAN_INCEPTION` must give them"),
    "eval.fid_n": ("[2, 1000000]", "default sample count of `fid --checkpoint` and `fid --run`"),
}

HAMS = ("ham_nmf", "ham_vq", "ham_cd")
# Context keys: (key, modules it means this for or None for any, range, meaning). A key name may
# appear twice with different modules where it means different things.
CONTEXT_KEYS = [
    ("type", None, "a module name", "the context module (`none`: no block)"),
    ("resolution", None, "[4, 1024], a feature size of the network", "the feature resolution the block sits at; the error lists the network's (e.g. 8, 16, 32 at 32 px)"),
    ("projections", None, "sagan, paper (`self_attention`: sagan)", "the branch's 1x1 maps: SAGAN's (q, k with C/`qk_divisor` channels, v with C/`v_divisor`, an output map) or the operator paper's own"),
    ("qk_divisor", None, "[1, 1024]", "SAGAN form: query and key channels = C / `qk_divisor`"),
    ("v_divisor", None, "[1, 1024]", "SAGAN form: value channels = C / `v_divisor`"),
    ("pool", None, "true, false", "2x2 max pooling of keys and values (SAGAN)"),
    ("groups", None, "[1, 1024]", "S: the lower bread maps C to S x d channels, decomposed per group"),
    ("d", None, "[0, 65536]", "the decomposed matrix's rows; 0: the input channels C"),
    ("r", None, "[0, 65536]", "bases (rank); 0: d / 8"),
    ("steps", None, "[1, 1000]", "K, iterations of the decomposition in training"),
    ("eval_steps", None, "[0, 1000]", "K in eval mode; 0: as `steps`"),
    ("grad", None, "one_step, bptt", "gradient through the decomposition: the paper's one-step gradient, or back-propagation through all K steps"),
    ("init", HAMS, "random, fixed, online", "the initial bases: drawn afresh every forward, drawn once and kept, or kept and moved towards each batch's solved bases"),
    ("momentum", None, "[0, 1]", "`init: online`: weight of the new batch mean in the update"),
    ("seed", None, ">= -1", "-1: bases from the global RNG; >= 0: from a private generator with this seed"),
    ("inv_t", None, "[1e-6, 1e6]", "1/T of the softmax that initialises the coefficients"),
    ("normalize_bases", None, "true, false", "random bases scaled to unit L2 norm per column"),
    ("temperature", None, "[1e-6, 1e6]", "T of the soft assignment (cosine similarity / T, softmax)"),
    ("beta", None, "[1e-8, 1e6]", "ridge weight of the closed-form coefficients (D^T D + beta I)"),
    ("learned", None, "true, false", "false: the random synthesizer R is a fixed buffer (kept in checkpoints)"),
    ("init_std", None, "[0, 100]", "R (or each Kronecker factor R_i) drawn from N(0, init_std^2)"),
    ("rows", ("stt_dense_factorized",), "list, each [1, 1048576], product H*W", "row sizes of the Kronecker factors of each HW-row matrix; []: [H, W]"),
    ("cols_h", None, "list as `rows`, product H", "column sizes of the factors of the H-mode matrix; []: [H, 1]"),
    ("cols_w", None, "list as `rows`, product W", "column sizes of the factors of the W-mode matrix; []: [1, W]"),
    ("cols_c", None, "list as `rows`, product c (query channels)", "column sizes of the factors of the channel-mode matrix; []: [1, c]"),
    ("rows", ("stt_random_factorized", "stt_mixture"), "list, each [1, 1048576], product H*W", "R = R_1 (x) ... (x) R_N: row sizes of the R_i; []: [H, W]"),
    ("cols", None, "list as `rows`, product H*W", "column sizes of the R_i; []: [H, W]"),
    ("theta_init", None, "[1e-6, 1 - 1e-6]", "weight of the random (Kronecker) part at init; the dense part gets 1 - theta_init"),
]

PROLOGUE = """\
# Configuration reference

<!-- Generated by scripts/config_reference.py from `hamgan info`; CTest's docs_configuration
     fails when the keys here and the binary's differ. Edit the script, then run
     `python3 scripts/config_reference.py build/hamgan`. -->

A config is YAML read into typed structs (`gan/config/config.h`). Every key is checked: an unknown
key, a value of the wrong type or out of range fails with the file, the full key and what was
expected, e.g.

```
hamgan info: error: configs/fmnist32_sagan.yaml: key 'generator.context.resolution': expected a feature resolution of this network (8, 16, 32), got 48
```

Any key can be overridden on the command line as `key.sub=value`, with the same checks
(`hamgan info -c configs/fmnist32_sagan.yaml generator.ch=16 train.g_lr=2e-4`). Each default is
written once, in the structs of `gan/config/config.h` and the modules' option structs;
`hamgan info -c CFG` prints the whole resolved config, and `hamgan info -c CFG --get data.path`
one value.

## Presets

A preset may start with `base: FILE` (relative to the preset): it then lists only what differs
from its base (which may have a base of its own). Mappings merge key by key, a scalar or list
replaces the base's, and a `context` whose `type` differs replaces the base's context whole (its
other keys are options of that type). Command-line overrides apply last. The run's
`config.yaml` (and every checkpoint) stores the whole resolved config, never a `base:`; a cycle
of bases or a missing base file is an error naming the files. `tests/test_config.cpp` checks
that every preset resolves to the config recorded in `tests/fixtures/presets_resolved/`.

| preset | what it is for |
|---|---|
| `fmnist32_sagan.yaml` | base of the Fashion-MNIST presets: SAGAN at 32x32 (ch 32, attention in G at 32x32 and D at 16x16), BigGAN's TTUR recipe |
| `fmnist32_quickstart.yaml` | the main job (`scripts/quickstart.sh`): a small HamGAN sized for 2 CPU cores ([results](results/quickstart/README.md)); base of `scripts/compare_modules.sh` |
| `fmnist32_long.yaml` | the long-run recipe: the quickstart's model at ch 16 for 20,000 iterations at constant rates, one process ([results](results/long/README.md)) |
| `fmnist32_hamgan.yaml` | HamGAN (NMF Hamburger in G and D) at the SAGAN base's size: the `ham_nmf` preset of the Fashion-MNIST list |
| `fmnist32_<module>.yaml` | the same model with another context module in G and D: `ham_vq`, `ham_cd`, `kao_kv`, `kao_qkv`, `sao`, `stt_dense`, `stt_dense_factorized`, `stt_mixture`, `stt_random`, `stt_random_factorized` |
| `imagenet128_sagan.yaml` | base of the ImageNet presets: SAGAN 128x128 (Zhang et al. 2019, BigGAN-PyTorch's SA-GAN recipe) |
| `imagenet128_hamgan.yaml` | HamGAN-baby of the Hamburger paper (NMF, d 256 / 128, r 32 / 16, K 6), ch 64, batch 256 |
| `imagenet128_cpu_smoke.yaml` | HamGAN-128 at ch 16, batch 8, to try an ImageNet-style folder on a CPU (stops after 20 minutes) |
| `imagenet128_ham_vq.yaml`, `imagenet128_ham_cd.yaml` | the Hamburger paper's other two decompositions at HamGAN's sizes |
| `imagenet128_<module>.yaml` | SAGAN-128 with the KAO, SAO and STT modules (as the Fashion-MNIST list) |

## Keys

Default: the value when neither the preset chain nor the command line sets the key. Presets:
the other values the shipped presets resolve to.
"""

CONTEXT_PROLOGUE = """\
`generator.context` and `discriminator.context` each take these keys, independently. `type`
picks the module; the other keys belong to the modules listed. The attention modules
(`self_attention`, `kao_kv`, `kao_qkv`, `sao`, `stt_*`) share `projections`, `v_divisor` and,
where they have a query or key, `qk_divisor`; the Hamburgers (`ham_*`) share the bread and
solver keys. STT's former `paper: true|false` is rejected with a hint (`projections:
paper|sagan`).
"""


def run_info(binary, config, overrides=()):
    """The resolved config of `hamgan info -c config overrides...` as {dotted key: value}.
    `--get ""` prints the whole resolved tree without building the models (seconds saved per
    call at 128 px); where it does not, the full `info` output's `# resolved config` block."""
    cmd = [binary, "info", "-c", config, *overrides]
    p = subprocess.run(cmd + ["--get", ""], cwd=ROOT, capture_output=True, text=True)
    lines = p.stdout.splitlines() if p.returncode == 0 else []
    if not any(l.startswith("model:") for l in lines):
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
        lines = p.stdout.splitlines()
        start = next(i for i, l in enumerate(lines) if l.startswith("# resolved config ("))
        lines = lines[start + 1:]
    block = []
    for line in lines:
        if not line.strip():
            break
        block.append(line)
    return parse_yaml(block)


def scalar(text):
    text = text.strip()
    if text == '""' or text == "''":
        return ""
    if re.fullmatch(r"-?\d+", text):
        return text
    try:
        return repr(float(text)).removesuffix(".0") if re.fullmatch(r"[-+0-9.eE]+", text) else text
    except ValueError:
        return text


def parse_yaml(lines):
    """The block YAML yaml-cpp emits for the resolved config: nested mappings of scalars and
    flow lists -> {dotted key: value text}."""
    out, stack = {}, []  # stack of (indent, key)
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        key, _, value = line.strip().partition(":")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([k for _, k in stack] + [key])
        if value.strip():
            out[path] = scalar(value)
        else:
            stack.append((indent, key))
    return out


def context_types(binary, minimal):
    """Every context type the binary knows: its error for an unknown type lists them."""
    p = subprocess.run([binary, "info", "-c", minimal, "generator.context.type=not_a_module"], cwd=ROOT,
                       capture_output=True, text=True)
    m = re.search(r"expected one of \{([^}]*)\}", p.stderr)
    if not m:
        raise RuntimeError(f"could not read the context types from: {p.stderr.strip()}")
    return [t.strip() for t in m.group(1).split(",")]


def split(resolved):
    """{dotted: value} -> (top-level keys {key: value}, [(type, {key: value}) per context block])."""
    top, blocks = {}, {}
    for k, v in resolved.items():
        section = next((s for s in CONTEXT_SECTIONS if k.startswith(s + ".")), None)
        if section:
            blocks.setdefault(section, {})[k[len(section) + 1:]] = v
        else:
            top[k] = v
    return top, [(b["type"], b) for b in blocks.values()]


def key_names(top, contexts):
    """The keys as the page lists them: dotted top-level keys, `context.<key>` for the common
    context keys and `context[<type>].<key>` for a module's own."""
    names = set(top)
    for t, block in contexts:
        for k in block:
            names.add(f"context.{k}" if k in COMMON_CONTEXT_KEYS else f"context[{t}].{k}")
    return names


def collect(binary):
    """Defaults (a config that sets nothing, once per context type) and the presets' values."""
    presets = sorted(f for f in os.listdir(os.path.join(ROOT, "configs")) if f.endswith(".yaml"))
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        minimal = os.path.join(tmp, "defaults.yaml")
        with open(minimal, "w") as f:
            f.write("model: {}\n")
        types = context_types(binary, minimal)
        top = pool.submit(run_info, binary, minimal)
        per_type = [pool.submit(run_info, binary, minimal, [f"generator.context.type={t}"]) for t in types]
        shipped = [pool.submit(run_info, binary, os.path.join("configs", f)) for f in presets]
        top_default, default_blocks = split(top.result())
        ctx_default = {}
        for t, job in zip(types, per_type):
            ctx_default[t] = dict(next(b for ty, b in split(job.result())[1] if ty == t))
        preset_values = [split(job.result()) for job in shipped]
    # The default type, for the page: each module above was asked for by its name.
    default_type = default_blocks[0][0]
    return types, top_default, default_type, ctx_default, preset_values


def binary_keys(binary):
    types, top_default, _, ctx_default, preset_values = collect(binary)
    names = key_names(top_default, [(t, ctx_default[t]) for t in types])
    for top, contexts in preset_values:
        names |= key_names(top, contexts)
    return names


def page_keys(text):
    names, section = set(), None
    for line in text.splitlines():
        if line.startswith("## "):
            section = line.strip()
        m = re.match(r"^\|\s*`([^`]+)`\s*\|([^|]*)\|", line)
        if not m or section not in (KEYS_HEADING, CONTEXT_HEADING):
            continue
        if section == KEYS_HEADING:
            names.add(m.group(1))
        elif m.group(1) in COMMON_CONTEXT_KEYS:
            names.add(f"context.{m.group(1)}")
        else:
            for t in re.findall(r"`([a-z_]+)`", m.group(2)):
                names.add(f"context[{t}].{m.group(1)}")
    return names


def cell(text):
    return text.replace("|", "\\|")


def show(v):
    return '`""`' if v == "" else f"`{v}`"


def others(default, values):
    rest = sorted({v for v in values if v != default}, key=lambda v: (len(v), v))
    if not rest:
        return ""
    return ", ".join(show(v) for v in rest[:6]) + (", ..." if len(rest) > 6 else "")


def generate(binary):
    types, top_default, default_type, ctx_default, preset_values = collect(binary)
    missing = [k for k in top_default if k not in KEYS]
    out = [PROLOGUE.rstrip("\n")]
    section = None
    for key, default in top_default.items():
        if key in missing:
            continue
        s = key.split(".")[0]
        if s != section:
            section = s
            out.append(f"\n### `{s}`\n\n| key | default | presets | range / values | meaning |\n|---|---|---|---|---|")
        rng, meaning = KEYS[key]
        used = others(default, [top.get(key) for top, _ in preset_values if key in top])
        out.append(f"| `{key}` | {show(default)} | {used} | {cell(rng)} | {cell(meaning)} |")

    out.append(f"\n{CONTEXT_HEADING}\n\n{CONTEXT_PROLOGUE}")
    out.append("| key | modules | default | presets | range / values | meaning |\n|---|---|---|---|---|---|")
    covered = set()
    for key, only, rng, meaning in CONTEXT_KEYS:
        mods = [t for t in types if key in ctx_default[t] and (only is None or t in only)]
        if not mods:
            missing.append(f"context.{key} (no module has it)")
            continue
        covered |= {(t, key) for t in mods}
        defaults = {}
        for t in mods:
            defaults.setdefault(ctx_default[t][key], []).append(t)
        if key == "type":
            defaults = {default_type: mods}
        default = show(next(iter(defaults))) if len(defaults) == 1 else "; ".join(
            f"{', '.join(ts)}: {show(v)}" for v, ts in defaults.items())
        values = [b[key] for _, contexts in preset_values for t, b in contexts if t in mods and key in b]
        used = others(next(iter(defaults)), values) if len(defaults) == 1 else ""
        if key == "type":
            used = ""  # every module: listed in the next column
        # Every module named (the check reads them back), but for the keys every type has.
        mod_text = "all" if key in COMMON_CONTEXT_KEYS else ", ".join(f"`{t}`" for t in mods)
        if key == "type":
            rng = ", ".join(types)
        out.append(f"| `{key}` | {mod_text} | {default} | {used} | {cell(rng)} | {cell(meaning)} |")
    for t in types:
        missing += [f"context[{t}].{k}" for k in ctx_default[t] if (t, k) not in covered]
    if missing:
        sys.exit("config_reference: no meaning written for " + ", ".join(missing) +
                 "; add it to KEYS or CONTEXT_KEYS in scripts/config_reference.py")
    return "\n".join(out) + "\n"


def main():
    try:
        run(sys.argv[1:])
    except (RuntimeError, OSError) as e:  # no binary, or one that fails on a preset: say which
        sys.exit(f"config_reference: {e}")


def run(args):
    if len(args) == 2 and args[0] == "--check":
        binary = os.path.abspath(args[1])
        with open(PAGE) as f:
            listed = page_keys(f.read())
        resolved = binary_keys(binary)
        if resolved != listed:
            for k in sorted(resolved - listed):
                print(f"config_reference: {k}: resolved by {args[1]}, missing in docs/configuration.md")
            for k in sorted(listed - resolved):
                print(f"config_reference: {k}: listed in docs/configuration.md, not resolved by {args[1]}")
            print("config_reference: regenerate the page: python3 scripts/config_reference.py BINARY")
            sys.exit(1)
        print(f"config_reference: docs/configuration.md lists the {len(resolved)} keys the binary resolves")
        return
    if len(args) not in (1, 2) or args[0].startswith("-"):
        sys.exit(__doc__)
    text = generate(os.path.abspath(args[0]))
    out = args[1] if len(args) == 2 else PAGE
    with open(out, "w") as f:
        f.write(text)
    print(f"config_reference: wrote {out}")


if __name__ == "__main__":
    main()
