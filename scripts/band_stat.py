#!/usr/bin/env python3
"""Band statistic of a folder of samples: does the generator draw a position-dependent
band of stripes near the bottom / right edge?

  python3 scripts/band_stat.py DIR [DIR ...]

DIR holds PNG samples (`hamgan sample --out DIR` writes DIR/<class>/<k>.png; every *.png below DIR
is read). Per DIR: the mean image over all samples and channels (a float grayscale image, 0-255),
its mean row profile (the mean over columns: one value per row) and mean column profile (one per
column). For a profile p the neighbour deviations are |p[i+1] - p[i]|; the statistic of an axis is

    max over i in the band [0.79 R, 0.97 R)  /  max over i in the interior [3, 0.78 R)

(R the image side along that axis; [101, 124) and [3, 100) at R = 128), and `band` is the larger of
the two axes.

Why it measures a band: a generator whose layers treat all positions alike (convolutions,
upsampling, a context module that is equivariant over positions) gives samples whose mean over
many samples has no structure in one part of the image that the rest of the interior lacks; the
mean profiles are smooth, and the largest neighbour step in the band is about as large as in the
interior, so the ratio is ~1 (noise). A band of period-2 stripes that recurs in every sample at the
same rows or columns survives the averaging, makes large alternating steps in the profile, and the
ratio rises well above 1 (docs/results/ has measured values: 2-5 for HamGAN-128 smoke runs at
150 iterations, 1.19 for SAGAN's; the training crops themselves show no band). The outermost pixels (i < 3 and i >= 0.97 R) are left
out, since padding legitimately makes the border differ.

Output: one JSON line per DIR on stdout, e.g.
  {"dir": "...", "n": 100, "band": 3.06, "rows": 3.06, "cols": 1.1,
   "rows_band_max": 12.1, "rows_interior_max": 3.95, "cols_band_max": ..., "cols_interior_max": ...,
   "band_range": [101, 124], "interior_range": [3, 100]}
with "error" (and band null) where DIR has no PNG. Exit status 1 if any DIR failed.
Needs numpy and PIL only."""
import glob
import json
import os
import sys

import numpy as np
from PIL import Image


def bounds(r):
    """(band_lo, band_hi, int_lo, int_hi) over neighbour-deviation indices for a side of r pixels."""
    band_lo, band_hi = int(round(0.79 * r)), int(round(0.97 * r))
    int_lo, int_hi = 3, int(round(0.78 * r))
    band_hi = min(band_hi, r - 1)  # r - 1 deviations
    return band_lo, band_hi, int_lo, int_hi


def mean_image(files):
    acc, n = None, 0
    for f in files:
        with Image.open(f) as im:
            a = np.asarray(im.convert("RGB") if im.mode not in ("L", "RGB") else im, dtype=np.float64)
        g = a.mean(axis=2) if a.ndim == 3 else a  # grayscale: mean over channels
        if acc is None:
            acc = np.zeros_like(g)
        elif g.shape != acc.shape:
            raise ValueError(f"{f}: size {g.shape} differs from {acc.shape}")
        acc += g
        n += 1
    return acc / max(n, 1), n


def axis_stat(profile):
    d = np.abs(np.diff(profile))
    b0, b1, i0, i1 = bounds(len(profile))
    band, interior = float(d[b0:b1].max()), float(d[i0:i1].max())
    ratio = band / interior if interior > 0 else (float("inf") if band > 0 else 1.0)
    return ratio, band, interior, (b0, b1), (i0, i1)


def stat(directory):
    files = sorted(glob.glob(os.path.join(directory, "**", "*.png"), recursive=True))
    if not files:
        return {"dir": directory, "n": 0, "band": None, "rows": None, "cols": None,
                "error": "no *.png below this folder"}
    m, n = mean_image(files)
    rows, rb, ri, brange, irange = axis_stat(m.mean(axis=1))  # one value per row
    cols, cb, ci, _, _ = axis_stat(m.mean(axis=0))  # one value per column
    r3 = lambda x: round(x, 4)
    return {"dir": directory, "n": n, "band": r3(max(rows, cols)), "rows": r3(rows), "cols": r3(cols),
            "rows_band_max": r3(rb), "rows_interior_max": r3(ri),
            "cols_band_max": r3(cb), "cols_interior_max": r3(ci),
            "band_range": list(brange), "interior_range": list(irange)}


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    failed = False
    for d in argv:
        try:
            r = stat(d)
        except Exception as e:  # one bad folder must not hide the others' lines
            r = {"dir": d, "band": None, "rows": None, "cols": None, "error": str(e)}
        failed |= r.get("band") is None
        print(json.dumps(r), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
