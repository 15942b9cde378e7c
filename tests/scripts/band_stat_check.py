"""scripts/band_stat.py, the border-stripes statistic of docs/band/README.md, on folders of
synthetic 128 px PNGs whose answer is known.

  band_stat_check.py SOURCE_DIR WORK_DIR

- Stripes of amplitude a (rows alternating +-a) in rows 108-117: `stripes_end` is a to within
  the PNG rounding, `stripes_start` and `stripes_middle` are ~0.
- The same images flipped upside down: start and end swap exactly (the statistic treats both
  ends of an axis alike), and transposed: the columns carry them.
- A smooth vertical ramp with no stripes: every stripe amplitude ~0 (shading is not stripes).
- A folder without PNGs: an error line and exit status 1.
Exits non-zero with the first failed check."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

root, work = sys.argv[1], sys.argv[2]
script = os.path.join(root, "scripts", "band_stat.py")
R, A = 128, 6.0
rng = np.random.default_rng(0)


def folder(name, images):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "0000"))
    for k, im in enumerate(images):
        Image.fromarray(np.clip(np.rint(im), 0, 255).astype(np.uint8)).save(os.path.join(d, "0000", f"{k}.png"))
    return d


def stat(d):
    p = subprocess.run([sys.executable, script, d], capture_output=True, text=True)
    return p.returncode, json.loads(p.stdout)


def check(cond, what):
    if not cond:
        sys.exit(f"band_stat_check: FAILED: {what}")
    print(f"ok: {what}")


def base_image():
    """Smooth content (a low-frequency blob) plus per-image noise that averages out."""
    y, x = np.mgrid[0:R, 0:R] / R
    im = 120 + 40 * np.exp(-((x - rng.uniform(0.3, 0.7)) ** 2 + (y - rng.uniform(0.3, 0.7)) ** 2) / 0.05)
    return np.repeat((im + rng.normal(0, 2, (R, R)))[:, :, None], 3, axis=2)


def striped():
    im = base_image()
    rows = np.arange(108, 118)
    im[rows] += (A * np.where(rows % 2 == 0, 1, -1))[:, None, None]
    return im


images = [striped() for _ in range(40)]
rc, s = stat(folder("end_rows", images))
check(rc == 0 and abs(s["stripes_end"] - A) < 0.1, f"stripes at rows 108-117: stripes_end {s['stripes_end']} ~ {A}")
check(s["stripes_start"] < 0.5 and s["stripes_middle"] < 0.5,
      f"no stripes elsewhere: start {s['stripes_start']}, middle {s['stripes_middle']} < 0.5")
check(s["stripes"] == s["stripes_end"] and s["stripes_rows"][2] == s["stripes_end"], "rows carry them")

rc, f = stat(folder("start_rows", [im[::-1] for im in images]))
check(rc == 0 and f["stripes_start"] == s["stripes_end"] and f["stripes_end"] == s["stripes_start"],
      f"flipped upside down, start and end swap: {f['stripes_start']} / {f['stripes_end']}")

rc, t = stat(folder("end_cols", [im.transpose(1, 0, 2) for im in images]))
check(rc == 0 and t["stripes_cols"] == s["stripes_rows"] and t["stripes_rows"] == s["stripes_cols"],
      "transposed, the columns carry the same amplitudes")

ramp = [np.repeat(np.repeat(np.linspace(20, 235, R)[:, None], R, 1)[:, :, None], 3, 2) + rng.normal(0, 2, (R, R, 1))
        for _ in range(40)]
rc, r = stat(folder("ramp", ramp))
check(rc == 0 and r["stripes"] < 0.5, f"a smooth ramp has no stripes: {r['stripes']} < 0.5")

empty = os.path.join(work, "empty")
os.makedirs(empty, exist_ok=True)
rc, e = stat(empty)
check(rc == 1 and e["band"] is None and "error" in e, "a folder without PNGs is an error")
print("band_stat_check: all checks passed")
