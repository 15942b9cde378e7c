"""StyleGAN2-ADA's "bgc" augmentation pipeline (Karras et al. 2020, Appendix B) as /tmp/ada/spec.md
states it: the independent reference for gan/train/ada.cpp. Written from the equations, with
explicit per-image loops for the matrices and explicit 1-D sums for the filters; the geometric part
does not use affine_grid / grid_sample / conv / F.pad: the bilinear sampling, the reflection padding
and the up/downsampling filters are written here with index arithmetic over whole images (so it
stays fast and differentiable in x). float64 throughout; the draws are made here (extremes in the
first two images of every case) and handed to the C++ side with the outputs and gradients."""
import math

import torch

from common import out_dir, save

F64 = torch.float64
P = 3  # filter taps // 4
SYM6 = [0.015404109327027373, 0.0034907120842174702, -0.11799011114819057, -0.048311742585633,
        0.4910559419267466, 0.787641141030194, 0.3379294217276218, -0.07263752278646252,
        -0.021060292512300564, 0.04472490177066578, 0.0017677118642428036, -0.007800708325034148]
FILT = [v / sum(SYM6) for v in SYM6]
GATES = ["xflip", "rot90", "xint", "scale", "rot_pre", "aniso", "rot_post", "xfrac",
         "brightness", "contrast", "lumaflip", "hue", "saturation"]


def mat(rows):
    return torch.tensor(rows, dtype=F64)


def T(tx, ty):
    return mat([[1, 0, tx], [0, 1, ty], [0, 0, 1]])


def S(sx, sy):
    return mat([[sx, 0, 0], [0, sy, 0], [0, 0, 1]])


def R(t):
    return mat([[math.cos(t), -math.sin(t), 0], [math.sin(t), math.cos(t), 0], [0, 0, 1]])


def draws(g, B):
    def u(*s):
        return torch.rand(*s, generator=g, dtype=F64)

    def n(*s):
        return torch.randn(*s, generator=g, dtype=F64)

    def i(hi):
        return torch.randint(0, hi, (B,), generator=g).to(F64)

    d = {"xflip_i": i(2), "rot90_i": i(4), "xint_t": (u(B, 2) - 0.5) * 0.25,
         "scale_n": n(B), "rot_pre_t": u(B) * 2 - 1, "aniso_n": n(B), "rot_post_t": u(B) * 2 - 1,
         "xfrac_n": n(B, 2), "brightness_n": n(B), "contrast_n": n(B), "lumaflip_i": i(2),
         "hue_t": u(B) * 2 - 1, "saturation_n": n(B)}
    for k in GATES:
        d[k + "_u"] = u(B)
        d[k + "_u"][0], d[k + "_u"][1] = 0.0, 0.999  # image 0: everything applied; image 1: nothing
    d["xflip_i"][0], d["rot90_i"][0], d["lumaflip_i"][0] = 1.0, 1.0, 1.0
    d["scale_n"][0] = -3.0      # shrink: a large margin, clamped to the image size
    return d


def geometric_matrices(d, p, policy, H, W):
    """G_inv per image, pixel units, origin at the centre, x = column, y = row."""
    q, q_rot = p, 1 - math.sqrt(1 - p)
    out = []
    for n in range(d["xflip_u"].shape[0]):
        def on(k, qq=q):
            return float(d[k + "_u"][n]) < qq
        G = torch.eye(3, dtype=F64)
        if "b" in policy:
            i = float(d["xflip_i"][n]) if on("xflip") else 0.0
            G = G @ S(1 / (1 - 2 * i), 1)
            i = float(d["rot90_i"][n]) if on("rot90") else 0.0
            G = G @ R(math.pi / 2 * i)
            tx, ty = (round(float(d["xint_t"][n, 0]) * W), round(float(d["xint_t"][n, 1]) * H)) if on("xint") else (0, 0)
            G = G @ T(-tx, -ty)  # Python's round: half to even
        if "g" in policy:
            s = 2 ** (0.2 * float(d["scale_n"][n])) if on("scale") else 1.0
            G = G @ S(1 / s, 1 / s)
            G = G @ R(math.pi * float(d["rot_pre_t"][n]) if on("rot_pre", q_rot) else 0.0)
            s = 2 ** (0.2 * float(d["aniso_n"][n])) if on("aniso") else 1.0
            G = G @ S(1 / s, s)
            G = G @ R(math.pi * float(d["rot_post_t"][n]) if on("rot_post", q_rot) else 0.0)
            tx, ty = (0.125 * float(d["xfrac_n"][n, 0]) * W, 0.125 * float(d["xfrac_n"][n, 1]) * H) if on("xfrac") else (0.0, 0.0)
            G = G @ T(-tx, -ty)
        out.append(G)
    return torch.stack(out)


def reflect_pad_last(x, lo, hi):
    """Reflection without repeating the edge: -1 -> 1, L -> L - 2."""
    L = x.shape[-1]
    idx = [-i if i < 0 else (2 * (L - 1) - i if i >= L else i) for i in range(-lo, L + hi)]
    return x.index_select(-1, torch.tensor(idx))


def upsample_last(x):
    """out[m] = 2 sum_k u[m + 5 - k] f[k], u[2j] = x[j], u[2j + 1] = 0, 0 outside."""
    L = x.shape[-1]
    m = torch.arange(2 * L)
    out = torch.zeros(*x.shape[:-1], 2 * L, dtype=F64)
    for k in range(12):
        idx = m + 5 - k
        ok = (idx % 2 == 0) & (idx >= 0) & (idx < 2 * L)
        src = torch.where(ok, idx // 2, torch.zeros_like(idx))
        out = out + 2 * FILT[k] * x.index_select(-1, src) * ok.to(F64)
    return out


def downsample_last(v):
    """Drop the first and last samples, cross-correlate with f, keep the even outputs."""
    v = v[..., 1:-1]
    n_out = (v.shape[-1] - 11 + 1) // 2
    j = torch.arange(n_out)
    out = torch.zeros(*v.shape[:-1], n_out, dtype=F64)
    for k in range(12):
        out = out + FILT[k] * v.index_select(-1, 2 * j + k)
    return out


def bilinear(img, G, Ho, Wo):
    """affine_grid + grid_sample(bilinear, zeros, align_corners=False), written out."""
    n, C, Hu, Wu = img.shape
    xn = (2 * torch.arange(Wo, dtype=F64) + 1) / Wo - 1
    yn = (2 * torch.arange(Ho, dtype=F64) + 1) / Ho - 1
    gx = G[:, 0, 0, None, None] * xn[None, None, :] + G[:, 0, 1, None, None] * yn[None, :, None] + G[:, 0, 2, None, None]
    gy = G[:, 1, 0, None, None] * xn[None, None, :] + G[:, 1, 1, None, None] * yn[None, :, None] + G[:, 1, 2, None, None]
    ix, iy = ((gx + 1) * Wu - 1) / 2, ((gy + 1) * Hu - 1) / 2
    x0, y0 = torch.floor(ix), torch.floor(iy)
    flat = img.reshape(n, C, Hu * Wu)
    out = torch.zeros(n, C, Ho * Wo, dtype=F64)
    for dx in (0, 1):
        for dy in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            w = (1 - (ix - xi).abs()) * (1 - (iy - yi).abs())  # (1 - frac) or frac
            ok = (xi >= 0) & (xi <= Wu - 1) & (yi >= 0) & (yi <= Hu - 1)
            lin = (yi.clamp(0, Hu - 1) * Wu + xi.clamp(0, Wu - 1)).long().reshape(n, 1, -1).expand(n, C, -1)
            out = out + flat.gather(2, lin) * (w * ok.to(F64)).reshape(n, 1, -1)
    return out.reshape(n, C, Ho, Wo)


def geometric_core(x, G):
    """Steps 1-5 on a subset x [n, C, H, W] with its pixel-unit inverses G [n, 3, 3]."""
    n, C, H, W = x.shape
    cx, cy = (W - 1) / 2, (H - 1) / 2
    corners = mat([[-cx, cx, cx, -cx], [-cy, -cy, cy, cy], [1, 1, 1, 1]])
    pts = G @ corners
    X, Y = pts[:, 0], pts[:, 1]
    m = [float((-X).max()), float((-Y).max()), float(X.max()), float(Y.max())]
    mx0, my0, mx1, my1 = [math.ceil(min(max(v + 2 * P - c, 0.0), lim))
                          for v, c, lim in zip(m, [cx, cy, cx, cy], [W - 1, H - 1, W - 1, H - 1])]
    xp = reflect_pad_last(x, mx0, mx1)
    xp = reflect_pad_last(xp.transpose(2, 3), my0, my1).transpose(2, 3)
    G = T((mx0 - mx1) / 2, (my0 - my1) / 2) @ G
    xu = upsample_last(upsample_last(xp).transpose(2, 3)).transpose(2, 3)
    G = S(2, 2) @ G @ S(0.5, 0.5)
    G = T(-0.5, -0.5) @ G @ T(0.5, 0.5)
    Ho, Wo = 2 * (H + 2 * P), 2 * (W + 2 * P)
    Hu, Wu = 2 * (H + my0 + my1), 2 * (W + mx0 + mx1)
    assert xu.shape[2:] == (Hu, Wu)
    G = S(2 / Wu, 2 / Hu) @ G @ S(Wo / 2, Ho / 2)
    ys = bilinear(xu, G, Ho, Wo)
    y = downsample_last(downsample_last(ys).transpose(2, 3)).transpose(2, 3)
    assert y.shape == x.shape
    return y


def geometric(x, G):
    moved = [n for n in range(x.shape[0]) if not torch.equal(G[n], torch.eye(3, dtype=F64))]
    if not moved:
        return x
    ys = geometric_core(x[moved], G[moved])
    return torch.stack([ys[moved.index(n)] if n in moved else x[n] for n in range(x.shape[0])])


def colour_matrices(d, p, C):
    v = [1 / math.sqrt(3)] * 3 + [0.0]
    vv = mat([[a * b for b in v] for a in v])
    I4 = torch.eye(4, dtype=F64)
    out = []
    for n in range(d["brightness_u"].shape[0]):
        def on(k):
            return float(d[k + "_u"][n]) < p
        M = I4.clone()
        b = 0.2 * float(d["brightness_n"][n]) if on("brightness") else 0.0
        M = mat([[1, 0, 0, b], [0, 1, 0, b], [0, 0, 1, b], [0, 0, 0, 1]]) @ M
        c = 2 ** (0.5 * float(d["contrast_n"][n])) if on("contrast") else 1.0
        M = mat([[c, 0, 0, 0], [0, c, 0, 0], [0, 0, c, 0], [0, 0, 0, 1]]) @ M
        i = float(d["lumaflip_i"][n]) if on("lumaflip") else 0.0
        M = (I4 - 2 * i * vv) @ M
        if C == 3:
            t = math.pi * float(d["hue_t"][n]) if on("hue") else 0.0
            co, si, cc = math.cos(t), math.sin(t), 1 - math.cos(t)
            vx, vy, vz = v[:3]
            M = mat([[vx * vx * cc + co, vx * vy * cc - vz * si, vx * vz * cc + vy * si, 0],
                     [vy * vx * cc + vz * si, vy * vy * cc + co, vy * vz * cc - vx * si, 0],
                     [vz * vx * cc - vy * si, vz * vy * cc + vx * si, vz * vz * cc + co, 0],
                     [0, 0, 0, 1]]) @ M
            s = 2 ** (1.0 * float(d["saturation_n"][n])) if on("saturation") else 1.0
            M = (vv + (I4 - vv) * s) @ M  # note: makes M[3, 3] = s (row 3 is never used)
        out.append(M)
    return torch.stack(out)


def colour(x, M):
    ys = []
    for n in range(x.shape[0]):
        if x.shape[1] == 3:
            ys.append(torch.stack([M[n, i, 0] * x[n, 0] + M[n, i, 1] * x[n, 1] + M[n, i, 2] * x[n, 2] + M[n, i, 3]
                                   for i in range(3)]))
        else:
            a = (M[n, 0] + M[n, 1] + M[n, 2]) / 3
            ys.append(x[n] * (a[0] + a[1] + a[2]) + a[3])
    return torch.stack(ys)


def augment(x, d, p, policy):
    B, C, H, W = x.shape
    G = geometric_matrices(d, p, policy, H, W)
    M = colour_matrices(d, p, C)
    if "b" in policy or "g" in policy:
        x = geometric(x, G)
    if "c" in policy:
        x = colour(x, M)
    return x, G, M


def smooth(H, W, period):
    i = torch.arange(H, dtype=F64)[:, None]
    j = torch.arange(W, dtype=F64)[None, :]
    return (torch.sin(2 * math.pi * i / period + 0.3) * torch.cos(2 * math.pi * (j - 1.7) / period)).view(1, 1, H, W)


def sanity_checks():
    # Up then down with G_inv = I forced through the path (margin 2P, so the sampling is an exact
    # crop): sym6 is orthogonal, so the round trip is perfect reconstruction, on any image and to
    # the edges (stricter than the 1e-2 a low-pass round trip needs); catches filter-index slips.
    x = torch.randn(2, 3, 10, 8, generator=torch.Generator().manual_seed(5), dtype=F64)
    err = float((geometric_core(x, torch.eye(3, dtype=F64).expand(2, 3, 3)) - x).abs().max())
    assert err < 1e-10, f"up/down round trip: {err}"
    # rot90 with i = 1: G_inv = R(pi/2), output (x, y) reads input (-y, x) (centred, x = column,
    # y = row), i.e. out[r, c] = in[c, W - 1 - r]: torch.rot90(x, k=1, dims=[2, 3]).
    x = smooth(8, 8, 24.0)  # low frequency: the flipped filter pair is no longer exact
    y = geometric_core(x, R(math.pi / 2)[None])
    good = float((y - torch.rot90(x, 1, [2, 3]))[..., 2:-2, 2:-2].abs().max())
    bad = float((y - torch.rot90(x, -1, [2, 3]))[..., 2:-2, 2:-2].abs().max())
    assert good < 0.05 and bad > 0.3, f"rot90: {good} vs other direction {bad}"
    # xflip: G_inv = S(-1, 1) reads input (-x, y): torch.flip(x, [3]), up to the round trip.
    y = geometric_core(x, S(-1, 1)[None])
    assert float((y - torch.flip(x, [3]))[..., 2:-2, 2:-2].abs().max()) < 0.05
    return good, bad


d = out_dir()
good, bad = sanity_checks()
g = torch.Generator().manual_seed(2020)
out = {}
cases = {"rgb_bgc": (4, 3, 12, 10, 0.7, "bgc"), "gray32_bgc": (3, 1, 32, 32, 0.5, "bgc"),
         "rgb_b": (3, 3, 8, 8, 0.9, "b"), "rgb_g": (3, 3, 9, 7, 0.8, "g"), "rgb_c": (4, 3, 6, 6, 1.0, "c"),
         "gray_c": (4, 1, 6, 6, 1.0, "c"), "p0": (2, 3, 8, 8, 0.0, "bgc")}
for name, (B, C, H, W, p, policy) in cases.items():
    x = torch.randn(B, C, H, W, generator=g, dtype=F64)
    r = torch.randn(B, C, H, W, generator=g, dtype=F64)  # the gradient's probe
    dr = draws(g, B)
    dr["xint_t"][0] = torch.tensor([0.5 / W, -0.5 / H])  # ties: round(+-0.5) = 0 (half to even)
    if name == "rgb_b":  # gates open but every parameter the identity: G_inv is exactly I, untouched
        dr["xflip_u"][2], dr["rot90_u"][2], dr["xint_u"][2] = 0.0, 0.0, 0.0
        dr["xflip_i"][2], dr["rot90_i"][2], dr["xint_t"][2] = 0.0, 0.0, torch.tensor([0.03, -0.03])
    xx = x.clone().requires_grad_(True)
    y, G, M = augment(xx, dr, p, policy)
    (grad,) = torch.autograd.grad((y * r).sum(), xx)
    if p <= 0.999:  # image 1's gates are all 0.999: with p = 1 they are open too
        assert torch.equal(y[1].detach(), x[1]), f"{name}: image 1 (no gate open) changed"
    if name == "rgb_b":
        assert torch.equal(y[2].detach(), x[2]), "rgb_b: image 2 (identity parameters) changed"
    if p == 0.0:
        assert torch.equal(y.detach(), x), "p = 0 must be the identity"
    out.update({f"{name}.x": x, f"{name}.r": r, f"{name}.p": torch.tensor(p, dtype=F64),
                f"{name}.y": y.detach(), f"{name}.grad": grad})
    out.update({f"{name}.{k}": v for k, v in dr.items()})
    if name == "rgb_bgc":
        out[f"{name}.G_inv"], out[f"{name}.C"] = G, M
save(d, "ada.pt", out)
print(f"ada oracle: wrote {len(out)} tensors (rot90 i=1 = torch.rot90(k=1, dims=[2,3]): "
      f"err {good:.3g}, other direction {bad:.3g})")
