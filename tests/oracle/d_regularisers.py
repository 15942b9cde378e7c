"""DiffAugment (Zhao et al. 2020, Sec. 3) and LeCam (Tseng et al. 2021, Eq. 3) written from the
papers' definitions with explicit per-image, per-pixel loops: the independent reference for
gan/train/diff_augment.cpp (a gather and masks) and gan/train/lecam.cpp; R1 (Mescheder et al.
2018, Eq. 9) on the reference D of test_models (sagan_ref.py), one image's gradient at a time,
for gan/train/r1.cpp. float64 throughout; the draws are chosen here (extremes included) and
handed to the C++ side."""
import torch

from common import out_dir, prefixed, save
from sagan_ref import Discriminator, make_sagan_context, randomize_


def color(x, b, s, c):
    out = x.clone()
    for n in range(x.shape[0]):
        img = out[n] + (b[n] - 0.5)                       # brightness: + U[-1/2, 1/2)
        m_c = img.mean(dim=0, keepdim=True)               # per-pixel mean over channels
        img = (img - m_c) * (2 * s[n]) + m_c              # saturation: x 2s about it
        m = img.mean()                                    # the image's mean
        img = (img - m) * (c[n] + 0.5) + m                # contrast: x (c + 1/2) about it
        out[n] = img
    return out


def translation(x, tx, ty):
    """out[i, j] = x[i + tx, j + ty] where that is inside the image, else 0."""
    bsz, ch, h, w = x.shape
    rows = []
    for n in range(bsz):
        pix = []
        for i in range(h):
            for j in range(w):
                si, sj = i + int(tx[n]), j + int(ty[n])
                pix.append(x[n, :, si, sj] if 0 <= si < h and 0 <= sj < w else torch.zeros(ch, dtype=x.dtype))
        rows.append(torch.stack(pix, dim=1).view(ch, h, w))
    return torch.stack(rows)


def cutout(x, cx, cy):
    """Zero the square of side round(H/2) x round(W/2) whose top-left is (c - side // 2), clipped."""
    bsz, _, h, w = x.shape
    sx, sy = int(h * 0.5 + 0.5), int(w * 0.5 + 0.5)
    mask = torch.ones(bsz, 1, h, w, dtype=x.dtype)
    for n in range(bsz):
        for i in range(h):
            for j in range(w):
                if cx[n] - sx // 2 <= i < cx[n] - sx // 2 + sx and cy[n] - sy // 2 <= j < cy[n] - sy // 2 + sy:
                    mask[n, 0, i, j] = 0
    return x * mask


def augment(x, d, policy):
    if "color" in policy:
        x = color(x, d["brightness"], d["saturation"], d["contrast"])
    if "translation" in policy:
        x = translation(x, d["shift_x"], d["shift_y"])
    if "cutout" in policy:
        x = cutout(x, d["cut_x"], d["cut_y"])
    return x


def draws(g, bsz, h, w):
    rx, ry = int(h * 0.125 + 0.5), int(w * 0.125 + 0.5)
    sx, sy = int(h * 0.5 + 0.5), int(w * 0.5 + 0.5)
    d = {
        "brightness": torch.rand(bsz, generator=g, dtype=torch.float64),
        "saturation": torch.rand(bsz, generator=g, dtype=torch.float64),
        "contrast": torch.rand(bsz, generator=g, dtype=torch.float64),
        "shift_x": torch.randint(-rx, rx + 1, (bsz,), generator=g),
        "shift_y": torch.randint(-ry, ry + 1, (bsz,), generator=g),
        "cut_x": torch.randint(0, h + 1 - sx % 2, (bsz,), generator=g),
        "cut_y": torch.randint(0, w + 1 - sy % 2, (bsz,), generator=g),
    }
    # The extremes of every range in the first two images: shifts +-r, centres at both ends.
    d["shift_x"][0], d["shift_y"][0], d["shift_x"][1], d["shift_y"][1] = rx, -ry, -rx, ry
    d["cut_x"][0], d["cut_y"][0], d["cut_x"][1], d["cut_y"][1] = 0, w - sy % 2, h - sx % 2, 0
    return d


POLICIES = {"color": ["color"], "translation": ["translation"], "cutout": ["cutout"],
            "all": ["color", "translation", "cutout"]}

d = out_dir()
g = torch.Generator().manual_seed(23)
out = {}
# name: (B, C, H, W): RGB, Fashion-MNIST's one channel at 32 (r 4, cutout 16), odd sizes
# (cutout 5 x 4: an odd side has centres in [0, H), an even one in [0, H]).
cases = {"rgb": (4, 3, 12, 10), "gray32": (3, 1, 32, 32), "odd": (3, 2, 9, 7)}
for name, (bsz, ch, h, w) in cases.items():
    x = torch.randn(bsz, ch, h, w, generator=g, dtype=torch.float64)
    r = torch.randn(bsz, ch, h, w, generator=g, dtype=torch.float64)  # weights of the gradient's probe
    dr = draws(g, bsz, h, w)
    out[f"{name}.x"], out[f"{name}.r"] = x, r
    for k, v in dr.items():
        out[f"{name}.{k}"] = v
    for pname, policy in POLICIES.items():
        xx = x.clone().requires_grad_(True)
        y = augment(xx, dr, policy)
        (grad,) = torch.autograd.grad((y * r).sum(), xx)
        out[f"{name}.{pname}.y"], out[f"{name}.{pname}.grad"] = y.detach(), grad

# LeCam, Eq. 3 in the authors' one-sided form: R = mean(relu(D(x) - a_F)^2) + mean(relu(a_R - D(G(z)))^2).
d_real = torch.randn(16, generator=g, dtype=torch.float64)
d_fake = torch.randn(16, generator=g, dtype=torch.float64) - 0.3
a_real, a_fake = torch.tensor(0.4, dtype=torch.float64), torch.tensor(-0.2, dtype=torch.float64)
dr_, df_ = d_real.clone().requires_grad_(True), d_fake.clone().requires_grad_(True)
reg = sum(max(float(v) - float(a_fake), 0.0) ** 2 for v in d_real) / 16 + \
    sum(max(float(a_real) - float(v), 0.0) ** 2 for v in d_fake) / 16
reg_t = torch.relu(dr_ - a_fake).pow(2).mean() + torch.relu(a_real - df_).pow(2).mean()
assert abs(float(reg_t) - reg) < 1e-12
gr, gf = torch.autograd.grad(reg_t, (dr_, df_))
out.update({"lecam.d_real": d_real, "lecam.d_fake": d_fake, "lecam.a_real": a_real, "lecam.a_fake": a_fake,
            "lecam.value": torch.tensor(reg, dtype=torch.float64), "lecam.grad_real": gr, "lecam.grad_fake": gf})

# Anchors: an EMA from 0 with decay beta, debiased by 1 - beta^t (t updates so far).
beta = 0.9
means = torch.randn(6, 2, generator=g, dtype=torch.float64)
ema, anchors = [0.0, 0.0], []
for t in range(1, 7):
    ema = [beta * e + (1 - beta) * float(m) for e, m in zip(ema, means[t - 1])]
    anchors.append([e / (1 - beta ** t) for e in ema])
out["anchors.decay"] = torch.tensor(beta, dtype=torch.float64)
out["anchors.means"] = means
out["anchors.expected"] = torch.tensor(anchors, dtype=torch.float64)
# R1 = E_i ||dD(x_i)/dx_i||^2 (before gamma / 2) and its gradient with respect to every parameter
# of D (spectral norm's weight_orig included), in train mode (one power iteration), on the gray32
# images as they are and through DiffAugment "all" with their draws (the gradient with respect
# to the images before T). Each image's gradient is taken on its own: D(x_i) must depend on x_i
# alone (no batch statistics), which is checked.
r1_y = torch.randint(0, 5, (3,), generator=g)
out["r1.y"] = r1_y
for key, transform in {"r1": lambda x: x,
                       "r1_all": lambda x: augment(x, {k: out["gray32." + k] for k in dr}, POLICIES["all"])}.items():
    dmod = Discriminator(32, 4, 5, 1, context="self_attention", context_res=16, make_context=make_sagan_context)
    dmod = dmod.double()
    randomize_(dmod, 31)
    out.update(prefixed(key + ".init", dmod.state_dict()))
    dmod.train()
    xx = out["gray32.x"].clone().requires_grad_(True)
    o = dmod(transform(xx), r1_y)
    norms = []
    for i in range(xx.shape[0]):
        (gi,) = torch.autograd.grad(o[i], xx, create_graph=True)
        others = torch.cat([gi[:i], gi[i + 1:]])
        assert float(others.abs().max()) == 0.0, "D(x_i) depends on another image"
        norms.append(gi[i].pow(2).sum())
    penalty = torch.stack(norms).mean()
    penalty.backward()
    out[key + ".value"] = penalty.detach()
    for k, p in dmod.named_parameters():  # None: D's input gradient does not depend on it (the head's bias)
        out[key + ".grad." + k] = p.grad if p.grad is not None else torch.zeros_like(p)
save(d, "d_regularisers.pt", out)
print("d_regularisers oracle: wrote", len(out), "tensors")
