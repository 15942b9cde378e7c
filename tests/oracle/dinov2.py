"""DINOv2 features (Oquab et al. 2023, "DINOv2: Learning Robust Visual Features without
Supervision": a ViT with 14 px patches) as dgm-eval takes them (Stein et al. 2023, "Exposing
flaws of generative model evaluation metrics"), written from the equations in float64: the
independent reference for metrics/dinov2.cpp and metrics/pil_resize.cpp.

dgm-eval's default DINOv2 path: the PIL RGB image -> torchvision Resize((224, 224), BICUBIC)
(Pillow's bicubic) -> ToTensor -> Normalize(ImageNet mean, std) -> the hub model, whose output
is the final-LayerNorm'ed class token (x_norm_clstoken). The hub model is built for 518 px
(its pos_embed is a 37 x 37 grid + class), so at 224 px the grid is resampled to 16 x 16 with
the official interpolate_pos_encoding (bicubic, scale factor (n + 0.1) / 37).

Writes random weights in the released file layout (vits14.pth) and the layouts of all four
released files, the preprocessed inputs and features of fixed images, the SwiGLU feed-forward
of ViT-g/14 on its own, two PNG folders with their FD_DINOv2, and three malformed weight files.
"""
import collections
import math
import os

import numpy as np
import scipy.linalg
import torch
import torch.nn.functional as F
import torchvision.transforms as T
from PIL import Image

from common import out_dir, save

PATCH = 14
GRID = 37  # the released pos_embed: (518 / 14)^2 = 1369 patch positions + the class token
INTERPOLATE_OFFSET = 0.1  # the hub models' interpolate_offset (interpolate_antialias is False)
LN_EPS = 1e-6
# name: (embed dim, depth, heads, SwiGLU feed-forward). ViT-g/14 is the paper's "giant2" with
# a fused SwiGLU FFN (Shazeer 2020); the others use fc1 -> GELU -> fc2 with ratio 4.
ARCHS = {
    "vits14": (384, 12, 6, False),
    "vitb14": (768, 12, 12, False),
    "vitl14": (1024, 24, 16, False),
    "vitg14": (1536, 40, 24, True),
}
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406])  # numpy float64, as dgm-eval passes them
IMAGENET_STD = np.array([0.229, 0.224, 0.225])
N_FD = 64  # images per PNG folder (see fd_folders)


def swiglu_hidden(dim):
    """SwiGLUFFNFused's hidden width: 2/3 of the MLP's 4 dim, rounded up to a multiple of 8."""
    return (int(4 * dim * 2 / 3) + 7) // 8 * 8


def layout(arch):
    """(key, shape) of each tensor of dinov2_<arch>_pretrain.pth, in the file's order: what
    DinoVisionTransformer(img_size=518, patch_size=14, init_values=1, block_chunks=0).state_dict()
    lists. A module's own parameters come before its children's, so the three root parameters
    (cls_token, pos_embed, mask_token) lead even though mask_token is assigned last; then
    patch_embed (its norm is Identity), the blocks (norm1, attn, ls1, norm2, mlp, ls2; DropPath
    and Dropout hold nothing), and the final norm (head is Identity)."""
    dim, depth, _, swiglu = ARCHS[arch]
    out = [("cls_token", [1, 1, dim]), ("pos_embed", [1, GRID * GRID + 1, dim]), ("mask_token", [1, dim]),
           ("patch_embed.proj.weight", [dim, 3, PATCH, PATCH]), ("patch_embed.proj.bias", [dim])]
    for i in range(depth):
        b = f"blocks.{i}."
        out += [(b + "norm1.weight", [dim]), (b + "norm1.bias", [dim]),
                (b + "attn.qkv.weight", [3 * dim, dim]), (b + "attn.qkv.bias", [3 * dim]),
                (b + "attn.proj.weight", [dim, dim]), (b + "attn.proj.bias", [dim]),
                (b + "ls1.gamma", [dim]), (b + "norm2.weight", [dim]), (b + "norm2.bias", [dim])]
        if swiglu:
            h = swiglu_hidden(dim)
            out += [(b + "mlp.w12.weight", [2 * h, dim]), (b + "mlp.w12.bias", [2 * h]),
                    (b + "mlp.w3.weight", [dim, h]), (b + "mlp.w3.bias", [dim])]
        else:
            out += [(b + "mlp.fc1.weight", [4 * dim, dim]), (b + "mlp.fc1.bias", [4 * dim]),
                    (b + "mlp.fc2.weight", [dim, 4 * dim]), (b + "mlp.fc2.bias", [dim])]
        out.append((b + "ls2.gamma", [dim]))
    return out + [("norm.weight", [dim]), ("norm.bias", [dim])]


def random_weights(arch, g):
    """float32 weights that keep every part of the network in play: matrices N(0, 1/fan_in)
    so that each layer's output stays O(1) (attention logits then have unit variance, neither
    uniform nor one-hot), small nonzero biases, LayerNorm gains 1 + N(0, 0.1), LayerScale gains
    U(0.1, 0.5) (the residual stream changes visibly per block without drowning the tokens),
    and class/position/mask tokens N(0, 0.5) (comparable to the patch embeddings, so the
    interpolated grid matters)."""
    def normal(shape, std, mean=0.0):
        return torch.randn(shape, generator=g) * std + mean

    sd = collections.OrderedDict()
    for key, shape in layout(arch):
        leaf = key.rsplit(".", 1)[-1]
        if key in ("cls_token", "pos_embed", "mask_token"):
            v = normal(shape, 0.5)
        elif leaf == "gamma":
            v = torch.rand(shape, generator=g) * 0.4 + 0.1
        elif key.endswith("norm1.weight") or key.endswith("norm2.weight") or key == "norm.weight":
            v = normal(shape, 0.1, 1.0)
        elif leaf == "weight":  # linear [out, in] and the patch conv [dim, 3, 14, 14]
            fan_in = math.prod(shape[1:])
            v = normal(shape, fan_in ** -0.5)
        else:  # biases, LayerNorm shifts
            v = normal(shape, 0.05)
        sd[key] = v.contiguous()
    return sd


# ---------------------------------------------------------------------------------------------
# The ViT, from the equations: no torch.nn modules. Exact writes each op out (the float64
# reference); Fused swaps in torch's kernels for the same ops where speed matters.

def layer_norm(x, w, b):
    """Ba et al. 2016 over the last dim, biased variance, eps 1e-6 as DINOv2's norm_layer."""
    mu = x.mean(-1, keepdim=True)
    var = (x - mu).pow(2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + LN_EPS) * w + b


def gelu(x):
    """The exact GELU (Hendrycks & Gimpel 2016), x Phi(x), as nn.GELU's default."""
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def silu(x):
    return x / (1 + torch.exp(-x))


def linear(x, p, name):
    return x @ p[name + ".weight"].t() + p[name + ".bias"]


def softmax(z):
    e = torch.exp(z - z.max(-1, keepdim=True).values)
    return e / e.sum(-1, keepdim=True)


class Exact:
    """The ops as written above: the float64 reference."""
    layer_norm = staticmethod(layer_norm)
    gelu = staticmethod(gelu)
    softmax = staticmethod(softmax)
    linear = staticmethod(linear)


class Fused:
    """torch's fused kernels for the same ops (a third less time): the float32 features of the
    FD folders, checked against Exact on the same inputs."""
    @staticmethod
    def layer_norm(x, w, b):
        return F.layer_norm(x, x.shape[-1:], w, b, LN_EPS)

    gelu = staticmethod(F.gelu)

    @staticmethod
    def softmax(z):
        return torch.softmax(z, -1)

    @staticmethod
    def linear(x, p, name):
        return F.linear(x, p[name + ".weight"], p[name + ".bias"])


def attention(x, p, heads, ops):
    """Multi-head self-attention (Vaswani et al. 2017): qkv's output features are ordered
    (q|k|v, head, head_dim); logits q.k / sqrt(head_dim)."""
    b, n, c = x.shape
    hd = c // heads
    qkv = ops.linear(x, p, "attn.qkv").view(b, n, 3, heads, hd).permute(2, 0, 3, 1, 4)  # [3, B, h, N, hd]
    q, k, v = qkv[0], qkv[1], qkv[2]
    a = ops.softmax(q @ k.transpose(-1, -2) * hd ** -0.5)
    return ops.linear((a @ v).transpose(1, 2).reshape(b, n, c), p, "attn.proj")


def feed_forward(x, p, swiglu, ops=Exact):
    if swiglu:  # SwiGLUFFNFused: w3(silu(x1) * x2), [x1 | x2] = w12(x) split in halves
        x1, x2 = ops.linear(x, p, "mlp.w12").chunk(2, -1)
        return ops.linear(silu(x1) * x2, p, "mlp.w3")
    return ops.linear(ops.gelu(ops.linear(x, p, "mlp.fc1")), p, "mlp.fc2")


def block(x, p, heads, swiglu, ops):
    """Pre-norm block with LayerScale (Touvron et al. 2021, CaiT): per-channel gains on both
    residual branches."""
    x = x + p["ls1.gamma"] * attention(ops.layer_norm(x, p["norm1.weight"], p["norm1.bias"]), p, heads, ops)
    return x + p["ls2.gamma"] * feed_forward(ops.layer_norm(x, p["norm2.weight"], p["norm2.bias"]), p, swiglu, ops)


def keys_cubic(t, a=-0.75):
    """Keys' (1981) cubic convolution weights for the 4 taps at offsets -1, 0, 1, 2 from
    floor(src), t = src - floor(src); a = -0.75 as PyTorch's bicubic."""
    def near(s):  # |s| <= 1
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s):  # 1 < |s| < 2
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def bicubic_axis(grid, axis, n_out, scale_factor):
    """Resamples one axis as F.interpolate(mode='bicubic', align_corners=False,
    scale_factor=s) does when given a scale factor: the source of output i is
    (i + 0.5) / s - 0.5 with the given s (not in / out), taps clamped to the border."""
    n_in = grid.shape[axis]
    inv = 1.0 / scale_factor
    rows = []
    for i in range(n_out):
        src = inv * (i + 0.5) - 0.5
        i0 = math.floor(src)
        w = keys_cubic(src - i0)
        taps = [grid.select(axis, min(max(i0 - 1 + k, 0), n_in - 1)) for k in range(4)]
        rows.append(sum(wk * tk for wk, tk in zip(w, taps)))
    return torch.stack(rows, axis)


def pos_embed_for(pos_embed, rows, cols):
    """The official interpolate_pos_encoding for an input of rows x cols patches (rows along
    the image height, which the official code calls w). The released 518 px grid is returned
    as is when it fits exactly; otherwise the 37 x 37 patch grid is resampled bicubically with
    scale factors ((rows + 0.1) / 37, (cols + 0.1) / 37) -- the offset is a historical guard
    against the output size rounding down (DINO issue #8); the output size is
    floor(37 * factor) = rows, cols, and the factor, not rows / 37, places the samples."""
    n = pos_embed.shape[1] - 1
    if rows * cols == n and rows == cols:
        return pos_embed
    m = int(math.sqrt(n))
    assert m * m == n
    sx, sy = float(rows + INTERPOLATE_OFFSET) / m, float(cols + INTERPOLATE_OFFSET) / m
    assert math.floor(m * sx) == rows and math.floor(m * sy) == cols
    grid = pos_embed[0, 1:].reshape(m, m, -1)  # [m, m, dim], row-major over the patch grid
    grid = bicubic_axis(bicubic_axis(grid, 0, rows, sx), 1, cols, sy)
    return torch.cat([pos_embed[:, :1], grid.reshape(1, rows * cols, -1)], 1)


def patch_embed(x, w, b):
    """The 14 x 14 stride-14 conv as a matmul over flattened patches, tokens in row-major
    patch order (the conv output's flatten(2))."""
    bsz, c, h, wd = x.shape
    assert h % PATCH == 0 and wd % PATCH == 0
    rows, cols = h // PATCH, wd // PATCH
    patches = x.reshape(bsz, c, rows, PATCH, cols, PATCH).permute(0, 2, 4, 1, 3, 5)
    return patches.reshape(bsz, rows * cols, c * PATCH * PATCH) @ w.reshape(w.shape[0], -1).t() + b


def vit_features(sd, x, arch, ops=Exact):
    """x: [B, 3, H, W] normalised -> [B, dim] x_norm_clstoken, in sd's dtype."""
    _, depth, heads, swiglu = ARCHS[arch]
    x = x.to(sd["cls_token"].dtype)
    rows, cols = x.shape[2] // PATCH, x.shape[3] // PATCH
    t = patch_embed(x, sd["patch_embed.proj.weight"], sd["patch_embed.proj.bias"])
    t = torch.cat([sd["cls_token"].expand(t.shape[0], -1, -1), t], 1)
    t = t + pos_embed_for(sd["pos_embed"], rows, cols)
    for i in range(depth):
        pre = f"blocks.{i}."
        p = {k[len(pre):]: v for k, v in sd.items() if k.startswith(pre)}
        t = block(t, p, heads, swiglu, ops)
    return ops.layer_norm(t, sd["norm.weight"], sd["norm.bias"])[:, 0]


# ---------------------------------------------------------------------------------------------
# dgm-eval's input pipeline, through the libraries it calls.

DGM_TRANSFORM = T.Compose([
    T.Resize((224, 224), T.InterpolationMode.BICUBIC),  # PIL in: Pillow's Image.resize, 8-bit out
    T.ToTensor(),
    T.Normalize(IMAGENET_MEAN, IMAGENET_STD),  # float32: (x - mean) / std
])


def to_pil(u8):
    """[C, H, W] uint8 -> the RGB PIL image dgm-eval's loader has (.convert('RGB') of a
    grayscale image repeats its channel)."""
    a = u8.permute(1, 2, 0).numpy()
    img = Image.fromarray(a[:, :, 0], "L") if a.shape[2] == 1 else Image.fromarray(a, "RGB")
    return img.convert("RGB")


def preprocess(u8):
    return torch.stack([DGM_TRANSFORM(to_pil(im)) for im in u8])


def smooth_images(g, n, c, h, w, noise=12.0):
    """8-bit images with structure: a random 5 x 5 field upsampled bilinearly, plus noise."""
    base = torch.rand(n, c, 5, 5, generator=g) * 255
    base = F.interpolate(base, size=(h, w), mode="bilinear", align_corners=False)
    return (base + torch.randn(n, c, h, w, generator=g) * noise).round().clamp(0, 255).to(torch.uint8)


# ---------------------------------------------------------------------------------------------
# FD_DINOv2 of two PNG folders, as dgm-eval computes it.

def frechet_pytorch_fid(mu1, s1, mu2, s2, eps=1e-6):
    """pytorch-fid's calculate_frechet_distance (dgm-eval's compute_FD_with_stats): scipy's
    sqrtm of s1 s2, retried with eps on the diagonals if not finite, real part."""
    diff = mu1 - mu2
    covmean, _ = scipy.linalg.sqrtm(s1.dot(s2), disp=False)
    if not np.isfinite(covmean).all():
        print("dinov2 oracle: singular product, eps added to the covariances' diagonals")
        off = np.eye(s1.shape[0]) * eps
        covmean = scipy.linalg.sqrtm((s1 + off).dot(s2 + off))
    if np.iscomplexobj(covmean):
        assert np.allclose(np.diagonal(covmean).imag, 0, atol=1e-3), np.abs(covmean.imag).max()
        covmean = covmean.real
    return diff.dot(diff) + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean)


def folder_images(rng, n, kind):
    """[n, 32, 32, 3] uint8. real: soft warm-coloured blobs on a light background. fake: a
    visibly different distribution, half cold-coloured stripes under strong noise and half
    real-like blobs under more noise: its features spread widely, so that the covariance term
    of the FD is as large as the mean term (not a rounding error beside it)."""
    yy, xx = np.mgrid[0:32, 0:32].astype(np.float64)
    out = np.empty((n, 32, 32, 3), np.uint8)
    for i in range(n):
        if kind == "real" or i % 2:
            img = np.full((32, 32, 3), 200.0) + rng.normal(0, 10, 3)
            for _ in range(rng.integers(1, 4)):
                cy, cx, r = rng.uniform(4, 28), rng.uniform(4, 28), rng.uniform(3, 9)
                colour = np.array([rng.uniform(150, 255), rng.uniform(40, 140), rng.uniform(0, 80)])
                alpha = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))[..., None]
                img = img * (1 - alpha) + colour * alpha
            img += rng.normal(0, 4 if kind == "real" else 16, img.shape)
        else:
            f, phase, ang = rng.uniform(0.2, 0.9), rng.uniform(0, 2 * np.pi), rng.uniform(0, np.pi)
            s = np.sin(f * (np.cos(ang) * xx + np.sin(ang) * yy) + phase)[..., None]
            lo = np.array([rng.uniform(0, 60), rng.uniform(60, 160), rng.uniform(120, 255)])
            hi = np.array([rng.uniform(0, 40), rng.uniform(0, 80), rng.uniform(40, 120)])
            img = lo + (hi - lo) * (s + 1) / 2 + rng.normal(0, 30, (32, 32, 3))
        out[i] = np.clip(np.round(img), 0, 255).astype(np.uint8)
    return out


def fd_folders(d, sd):
    """Writes real/ and fake/ (N_FD PNGs each) and returns their features, read back as
    dgm-eval reads a folder (PIL open, .convert('RGB'), the transform), through the ViT in
    float32 with fused ops (as the released model runs in dgm-eval).
    A 224 px image costs ~6 GMAC (~0.2 s on two cores), so full-rank covariances (more than
    384 images a folder) would take minutes; with N_FD < 384 both are singular, which
    pytorch-fid's formula handles: sqrtm of the product stays finite here, and its FD agrees
    with the exact one from the eigenvalues of s1^1/2 s2 s1^1/2 to ~1e-8 relative."""
    rng = np.random.default_rng(2023)
    feats = {}
    for kind in ("real", "fake"):
        folder = os.path.join(d, kind)
        os.makedirs(folder, exist_ok=True)
        for f in os.listdir(folder):  # a rerun into the same --out must not keep stale images
            os.remove(os.path.join(folder, f))
        for i, a in enumerate(folder_images(rng, N_FD, kind)):
            Image.fromarray(a, "RGB").save(os.path.join(folder, f"{i:04d}.png"))
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".png"))
        x = torch.stack([DGM_TRANSFORM(Image.open(f).convert("RGB")) for f in files])
        feats[kind] = torch.cat([vit_features(sd, xb, "vits14", Fused) for xb in x.split(32)])
    return feats


def main():
    d = out_dir()
    torch.set_num_threads(2)
    torch.set_grad_enabled(False)
    g = torch.Generator().manual_seed(142)  # LVD-142M

    sd = random_weights("vits14", g)
    torch.save(sd, os.path.join(d, "vits14.pth"))  # zip format, an OrderedDict like the release
    for arch in ARCHS:
        with open(os.path.join(d, f"layout_{arch}.txt"), "w") as f:
            for key, shape in layout(arch):
                f.write(f"{key} {','.join(map(str, shape))}\n")
    sd64 = collections.OrderedDict((k, v.double()) for k, v in sd.items())

    # Our bicubic resampling must be F.interpolate's with a scale factor, which the official
    # code calls (in float32; here in float64, where the two agree to rounding).
    for rows, cols in ((16, 16), (7, 9)):
        m = sd64["pos_embed"][0, 1:].reshape(1, GRID, GRID, -1).permute(0, 3, 1, 2)
        ref = F.interpolate(
            m, mode="bicubic", align_corners=False,
            scale_factor=((rows + INTERPOLATE_OFFSET) / GRID, (cols + INTERPOLATE_OFFSET) / GRID))
        ours = pos_embed_for(sd64["pos_embed"], rows, cols)[0, 1:]
        assert (ours - ref.permute(0, 2, 3, 1).reshape(rows * cols, -1)).abs().max() < 1e-12

    out = {}
    images = {"a": smooth_images(g, 2, 3, 32, 32), "b": smooth_images(g, 2, 3, 64, 64),
              "gray": smooth_images(g, 2, 1, 32, 32)}
    for name, u8 in images.items():
        out[f"img.{name}"] = u8.float() / 255  # exactly k / 255 in float32, as ToTensor divides
        out[f"pre.{name}"] = preprocess(u8)
        out[f"feat224.{name}"] = vit_features(sd64, out[f"pre.{name}"], "vits14")
    # The FD features' float32 fused path against the float64 reference.
    err = (vit_features(sd, out["pre.a"], "vits14", Fused) - out["feat224.a"]).abs().max().item()
    assert err < 1e-4, f"float32 fused features off the float64 reference by {err}"
    out["pos.16x16"] = pos_embed_for(sd64["pos_embed"], 16, 16)
    out["pos.7x9"] = pos_embed_for(sd64["pos_embed"], 7, 9)

    # Inputs off dgm-eval's path: 518 px, where the released grid is used as is, and a
    # non-square 98 x 126 px (7 x 9 patches) input.
    def normalised(u8):
        mean = torch.tensor(IMAGENET_MEAN, dtype=torch.float32).view(1, 3, 1, 1)
        std = torch.tensor(IMAGENET_STD, dtype=torch.float32).view(1, 3, 1, 1)
        return (u8.float() / 255 - mean) / std
    out["raw.x"] = normalised(smooth_images(g, 1, 3, 518, 518))
    out["raw.feat518"] = vit_features(sd64, out["raw.x"], "vits14")
    out["raw.y"] = normalised(smooth_images(g, 2, 3, 98, 126))
    out["raw.feat_y"] = vit_features(sd64, out["raw.y"], "vits14")

    # ViT-g/14's feed-forward alone, at a small width: dim 48, hidden swiglu_hidden(48) = 128.
    h = swiglu_hidden(48)
    sw = {"mlp.w12.weight": torch.randn(2 * h, 48, generator=g, dtype=torch.float64) / math.sqrt(48),
          "mlp.w12.bias": torch.randn(2 * h, generator=g, dtype=torch.float64) * 0.1,
          "mlp.w3.weight": torch.randn(48, h, generator=g, dtype=torch.float64) / math.sqrt(h),
          "mlp.w3.bias": torch.randn(48, generator=g, dtype=torch.float64) * 0.1}
    out["swiglu.x"] = torch.randn(3, 5, 48, generator=g, dtype=torch.float64)
    for k, v in sw.items():
        out["swiglu." + k[len("mlp."):]] = v
    out["swiglu.out"] = feed_forward(out["swiglu.x"], sw, True)
    save(d, "expected.pt", out)

    feats = fd_folders(d, sd)
    real, fake = feats["real"].double().numpy(), feats["fake"].double().numpy()
    mu_r, mu_f = real.mean(0), fake.mean(0)
    s_r, s_f = np.cov(real, rowvar=False), np.cov(fake, rowvar=False)
    fd = frechet_pytorch_fid(mu_r, s_r, mu_f, s_f)
    save(d, "fd.pt", {"fd": torch.tensor(fd, dtype=torch.float64), "fd.mu_real": torch.from_numpy(mu_r),
                      "fd.mu_fake": torch.from_numpy(mu_f), "fd.sigma_real": torch.from_numpy(s_r),
                      "fd.sigma_fake": torch.from_numpy(s_f), "fd.feat_real": feats["real"],
                      "fd.feat_fake": feats["fake"]})

    # Malformed files: the loader must name what is wrong with each.
    bad = collections.OrderedDict(sd)
    del bad["blocks.3.attn.qkv.bias"]
    torch.save(bad, os.path.join(d, "missing_key.pth"))
    bad = collections.OrderedDict()
    for k, v in sd.items():  # in place, after the block's other attention tensors
        bad[k] = v
        if k == "blocks.3.attn.proj.bias":
            bad["blocks.3.attn.extra"] = torch.randn(384, generator=g)
    torch.save(bad, os.path.join(d, "extra_key.pth"))
    bad = collections.OrderedDict(sd)
    bad["blocks.5.mlp.fc1.weight"] = sd["blocks.5.mlp.fc1.weight"][:, :383].contiguous()
    torch.save(bad, os.path.join(d, "misshapen.pth"))

    # Another network's state dict (a ResNet's first and last layers): no feature network of hamgan's.
    torch.save(collections.OrderedDict([("conv1.weight", torch.randn(8, 3, 7, 7, generator=g)),
                                        ("bn1.weight", torch.ones(8)), ("fc.weight", torch.randn(10, 8, generator=g)),
                                        ("fc.bias", torch.zeros(10))]), os.path.join(d, "foreign.pth"))

    print(f"dinov2 oracle: feat224 std across images {out['feat224.a'].std(0).mean().item():.3f}, "
          f"FD {fd:.4f}")


if __name__ == "__main__":
    main()
