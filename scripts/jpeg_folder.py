#!/usr/bin/env python3
"""A synthetic ImageFolder for loader and training-loop checks on machines without photos (the lent
GPU machine has neither ImageNet nor Debian's wallpapers that scripts/photo_folder.py crops):
CLASSES synset-named classes x PER_CLASS images at sizes around 200 x 150, each a class-tinted
colour gradient with noise, so classes differ and every image decodes to distinct pixels.
JPEG (quality 90) with Pillow; without Pillow BMP from the standard library (the folder loader
reads both). Seeded: the same folder every run.

  python3 scripts/jpeg_folder.py OUT [PER_CLASS (default 128)] [CLASSES (default 10)]
"""
import os
import random
import struct
import sys

try:
    from PIL import Image, ImageFilter
except ImportError:  # the BMP fallback below needs nothing outside the standard library
    Image = None

SIZES = [(200, 150), (150, 200), (192, 144), (144, 192), (176, 176), (224, 168)]


SHIFTS = [bytes(max(0, min(255, i + s)) for i in range(256)) for s in range(-160, 161)]  # i -> i + s


def pixels(w, h, tint, rng):
    """Row-major RGB bytes of the same kind of image without a third-party module, fast enough
    (a few ms) by C-level bytes operations: the gradient is separable, so each row is a column
    profile (one of 8 noisy variants per channel) shifted by the row's offset through a table."""
    ax, ay = rng.uniform(-1, 1), rng.uniform(-1, 1)
    out = bytearray(w * h * 3)
    for c, t in enumerate(tint):
        profile = [int((128 + 96 * ax * (x / w - 0.5)) * t) for x in range(w)]
        variants = [bytes(max(0, min(255, v + rng.randrange(-24, 25))) for v in profile) for _ in range(8)]
        for y in range(h):
            shift = max(-160, min(160, int(96 * ay * (y / h - 0.5) * t)))
            row = variants[rng.randrange(8)].translate(SHIFTS[shift + 160])
            out[y * w * 3 + c:(y + 1) * w * 3:3] = row
    return out


def save_bmp(path, w, h, rgb):
    row = (w * 3 + 3) & ~3  # BMP rows are padded to 4 bytes and stored bottom-up, as BGR
    body = bytearray()
    for y in range(h - 1, -1, -1):
        line = rgb[y * w * 3:(y + 1) * w * 3]
        bgr = bytearray(line)
        bgr[0::3], bgr[2::3] = line[2::3], line[0::3]
        body += bgr + b"\0" * (row - w * 3)
    header = struct.pack("<2sIHHI", b"BM", 54 + len(body), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(body), 2835, 2835, 0, 0)
    with open(path, "wb") as f:
        f.write(header + info + body)


def pil_image(w, h, tint, rng):
    """The same kind of image through Pillow's C code (several times faster than pixels())."""
    grad = Image.linear_gradient("L").rotate(rng.uniform(0, 360)).resize((w, h))
    noise = Image.frombytes("L", (w, h), rng.randbytes(w * h))
    noise = noise.filter(ImageFilter.GaussianBlur(rng.uniform(0, 2)))  # the seeded rng, not Pillow's
    bands = [Image.blend(grad, noise, 0.35).point(lambda v, t=t: max(0, min(255, int(v * t))))
             for t in tint]
    return Image.merge("RGB", bands)


def main():
    if len(sys.argv) < 2 or len(sys.argv) > 4:
        sys.exit(__doc__)
    out = sys.argv[1]
    try:
        per_class = int(sys.argv[2]) if len(sys.argv) > 2 else 128
        n_cls = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    except ValueError:
        sys.exit(f"jpeg_folder: PER_CLASS and CLASSES: expected whole numbers, got {sys.argv[2:]}")
    if per_class < 1 or n_cls < 1:
        sys.exit(f"jpeg_folder: PER_CLASS and CLASSES: expected >= 1, got {per_class} and {n_cls}")
    rng = random.Random(35)
    for c in range(n_cls):
        cdir = os.path.join(out, f"n{c + 1:08d}")
        os.makedirs(cdir, exist_ok=True)
        tint = [rng.uniform(0.4, 1.6) for _ in range(3)]
        for i in range(per_class):
            w, h = SIZES[rng.randrange(len(SIZES))]
            name = os.path.join(cdir, f"n{c + 1:08d}_{i:04d}")
            if Image is not None:
                pil_image(w, h, tint, rng).save(name + ".JPEG", quality=90)
            else:
                save_bmp(name + ".bmp", w, h, pixels(w, h, tint, rng))
    kind = "JPEG" if Image is not None else "BMP (no Pillow)"
    print(f"jpeg_folder: {n_cls} classes x {per_class} {kind} images in {out}")


if __name__ == "__main__":
    main()
