"""Oracle for gan/data: Fashion-MNIST read with gzip+numpy, and a small ImageFolder tree and
CIFAR-style batches written here with their references computed by PIL (Pillow's
antialiased bilinear resize: Image.crop(box).resize(size, Image.BILINEAR))."""
import gzip
import io
import os

import numpy as np
import torch
from PIL import Image

from common import out_dir, save

FMNIST = "/usr/share/datasets/fashion-mnist"
R = 16  # folder/cifar test resolution


def idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def fit(im, res, channels, jpeg_denom=False):
    """Short-side centre crop, antialiased resize, then conversion: the reference pipeline."""
    if jpeg_denom:  # libjpeg's DCT-domain downscale: the largest d in 1, 2, 4, 8 with
        # min(w, h) / d >= 2 * res (documented rule), decoded by PIL's draft()
        d = max(x for x in (1, 2, 4, 8) if min(im.size) / x >= 2 * res or x == 1)
        if d > 1:
            im.draft("RGB", (im.size[0] // d, im.size[1] // d))
    im = im.convert("L" if (im.mode in ("L", "LA") and channels == 1) else "RGB")
    w, h = im.size
    s = min(w, h)
    x0, y0 = (w - s) // 2, (h - s) // 2
    im = im.crop((x0, y0, x0 + s, y0 + s))
    if im.size != (res, res):
        im = im.resize((res, res), Image.BILINEAR)
    im = im.convert("L" if channels == 1 else "RGB")
    a = np.asarray(im, dtype=np.uint8)
    if a.ndim == 2:
        a = a[None]
    else:
        a = a.transpose(2, 0, 1)
    return torch.from_numpy(a.copy())


def smooth_rgb(rng, w, h):
    """A smooth random image (a JPEG of white noise would be all artefacts)."""
    small = rng.integers(0, 256, size=(max(2, h // 8), max(2, w // 8), 3), dtype=np.uint8)
    return Image.fromarray(small).resize((w, h), Image.BICUBIC)


def folder(out, rng):
    root = os.path.join(out, "tree")
    files = []  # (class, name, image-or-bytes, jpeg_denom)
    files.append(("a_cats", "01.png", smooth_rgb(rng, 40, 30), False))
    files.append(("a_cats", "02.bmp", smooth_rgb(rng, 33, 47), False))
    files.append(("a_cats", "03.jpg", smooth_rgb(rng, 64, 48), True))
    files.append(("b_dogs", "01.png", smooth_rgb(rng, 25, 25).convert("L"), False))
    # 300 px short side at R=16: the rule picks denominator 8 (300 / 8 >= 2 * 16).
    files.append(("b_dogs", "02.jpg", smooth_rgb(rng, 400, 300), True))
    files.append(("b_dogs", "03.JPEG", smooth_rgb(rng, 20, 36), True))
    files.append(("c_birds", "01.bmp", smooth_rgb(rng, 16, 16), False))
    files.append(("c_birds", "02.jpg", None, 0))   # truncated JPEG
    files.append(("c_birds", "03.png", None, 0))   # not an image at all
    files.append(("c_birds", "04.png", smooth_rgb(rng, 50, 17).convert("RGBA"), False))
    refs3, refs1, valid, labels = [], [], [], []
    classes = sorted({c for c, *_ in files})
    for c, name, im, denom in files:
        d = os.path.join(root, c)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, name)
        labels.append(classes.index(c))
        if im is None:
            if name.endswith(".jpg"):
                buf = io.BytesIO()
                smooth_rgb(rng, 80, 60).save(buf, "JPEG", quality=90)
                data = buf.getvalue()[: len(buf.getvalue()) // 2]
            else:
                data = b"\x89PNG not really" + bytes(rng.integers(0, 256, 100, dtype=np.uint8))
            with open(path, "wb") as f:
                f.write(data)
            refs3.append(torch.zeros(3, R, R, dtype=torch.uint8))
            refs1.append(torch.zeros(1, R, R, dtype=torch.uint8))
            valid.append(0)
            continue
        fmt = {"png": "PNG", "bmp": "BMP", "jpg": "JPEG", "jpeg": "JPEG"}[name.split(".")[-1].lower()]
        im.save(path, fmt, **({"quality": 90} if fmt == "JPEG" else {}))
        refs3.append(fit(Image.open(path), R, 3, denom))
        refs1.append(fit(Image.open(path), R, 1, denom))
        valid.append(1)
    # A tree with an empty class directory: an error at start.
    os.makedirs(os.path.join(out, "tree_empty", "a", ), exist_ok=True)
    smooth_rgb(rng, 20, 20).save(os.path.join(out, "tree_empty", "a", "x.png"))
    os.makedirs(os.path.join(out, "tree_empty", "b_empty"), exist_ok=True)
    return {"folder.rgb": torch.stack(refs3), "folder.gray": torch.stack(refs1),
            "folder.valid": torch.tensor(valid), "folder.labels": torch.tensor(labels)}


def cifar(out, rng):
    d = os.path.join(out, "cifar")
    os.makedirs(d, exist_ok=True)
    imgs, labels = [], []
    for b, n in ((1, 20), (2, 10)):
        lab = rng.integers(0, 10, n, dtype=np.uint8)
        px = np.stack([np.asarray(smooth_rgb(rng, 32, 32)).transpose(2, 0, 1) for _ in range(n)])
        rec = np.concatenate([lab[:, None], px.reshape(n, -1)], axis=1)
        rec.astype(np.uint8).tofile(os.path.join(d, "data_batch_%d.bin" % b))
        imgs.append(px)
        labels.append(lab)
    px = np.concatenate(imgs)
    r16 = [fit(Image.fromarray(p.transpose(1, 2, 0)), R, 3) for p in px]
    return {"cifar.images": torch.from_numpy(px.copy()), "cifar.r16": torch.stack(r16),
            "cifar.labels": torch.from_numpy(np.concatenate(labels).astype(np.int64))}


def main():
    out = out_dir()
    rng = np.random.default_rng(0)
    images = idx(os.path.join(FMNIST, "train-images-idx3-ubyte.gz"))[:16]
    labels = idx(os.path.join(FMNIST, "train-labels-idx1-ubyte.gz"))[:16]
    pad = np.pad(images, ((0, 0), (2, 2), (2, 2)))
    r64 = [fit(Image.fromarray(a), 64, 1) for a in images[:4]]
    t = {"fmnist.images": torch.from_numpy(images.copy()),
         "fmnist.labels": torch.from_numpy(labels.astype(np.int64)),
         "fmnist.pad32": torch.from_numpy(pad.copy()), "fmnist.r64": torch.stack(r64)}
    t.update(folder(out, rng))
    t.update(cifar(out, rng))
    save(out, "data.pt", t)


if __name__ == "__main__":
    main()
