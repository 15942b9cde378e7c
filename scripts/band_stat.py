#!/usr/bin/env python3
"""Border-stripes statistics of a folder of samples: does the generator draw period-2 stripes
along a border of its images?

  python3 scripts/band_stat.py DIR [DIR ...]

DIR holds PNG samples (`hamgan sample --out DIR` writes DIR/<class>/<k>.png; every *.png below DIR
is read). Per DIR: the mean image over all samples and channels (a float grayscale image, 0-255),
its mean row profile (the mean over columns: one value per row) and mean column profile (one per
column). A generator whose layers treat all positions alike gives samples whose mean has no
stripes that recur at the same rows in every sample; stripes that do survive the averaging.

`stripes` (the statistic docs/band/README.md uses): per profile p, the period-2 amplitude
|p[i-1] - 2 p[i] + p[i+1]| / 4 in gray levels (a profile alternating p +- a gives a; smooth
shading gives ~0), its largest value in three zones of each axis: the end band [0.79 R, 0.97 R)
(rows or columns 101-123 at R = 128), its mirror image the start band (4-26) and the middle
between them. `stripes_rows` / `stripes_cols` list [start, middle, end]; `stripes_start`,
`stripes_end`, `stripes_middle` are the larger over the two axes, `stripes` the larger of start
and end. Both ends are measured alike, so a border artifact counts wherever it appears.

`band` (the first statistic, kept to compare with earlier tables): per axis, the largest
neighbour step |p[i+1] - p[i]| in the end band over the largest in [3, 0.78 R); the larger of
the two axes. It counts stripes at the end only: stripes in the start band raise its
denominator, so it reads a band at the top or left as no band at all.

The outermost pixels (i < 3 and i >= 0.97 R) are left out of both, since padding legitimately
makes the border differ.

Output: one JSON line per DIR on stdout, e.g.
  {"dir": "...", "n": 100, "band": 5.61, "rows": 5.61, "cols": 0.57,
   "stripes_rows": [1.68, 0.71, 8.14], "stripes_cols": [1.48, 0.59, 0.77], "stripes_start": 1.68,
   "stripes_end": 8.14, "stripes_middle": 0.71, "stripes": 8.14, "rows_band_max": ..., ...}
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


def zones(r):
    """(start, middle, end) index ranges of a side of r: the end band [0.79 R, 0.97 R), its mirror
    image about the centre, and what lies between them."""
    b0, b1, _, _ = bounds(r)
    return (r - b1, r - b0), (r - b0, b0), (b0, b1)


def stripe_amplitudes(profile):
    """(start, middle, end): the largest period-2 amplitude |p[i-1] - 2 p[i] + p[i+1]| / 4 of a
    profile in each zone, in gray levels. Stripes of amplitude a (a profile alternating p +- a)
    give a; a smooth ramp or shading gives ~0, unlike a neighbour step."""
    p = np.asarray(profile, dtype=np.float64)
    amp = np.zeros_like(p)
    amp[1:-1] = np.abs(p[:-2] - 2 * p[1:-1] + p[2:]) / 4
    return tuple(float(amp[lo:hi].max()) for lo, hi in zones(len(p)))


def stripes_fields(m, r3):
    """The symmetric statistic: period-2 amplitudes of the mean row and column profiles in the
    border zones at both ends (start: rows/columns 4-26, end: 101-123 at R = 128) and between."""
    out = {}
    for axis, prof in (("rows", m.mean(axis=1)), ("cols", m.mean(axis=0))):
        out[f"stripes_{axis}"] = [r3(v) for v in stripe_amplitudes(prof)]  # start, middle, end
    rows, cols = out["stripes_rows"], out["stripes_cols"]
    out["stripes_start"] = max(rows[0], cols[0])
    out["stripes_end"] = max(rows[2], cols[2])
    out["stripes_middle"] = max(rows[1], cols[1])
    out["stripes"] = max(out["stripes_start"], out["stripes_end"])
    return out


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
            **stripes_fields(m, r3),
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
